import Composition

/// Every key of the app's settings table as a flag, Kernel's and the app's own, by
/// swift-configuration's convention (`timeouts.callSeconds` → `--timeouts-call-seconds 7`,
/// an environment's `baseURL` → `--environments-local-base-url URL`), before or after the
/// command. ArgumentParser knows only the global options it declares, so the others are taken
/// out of the arguments before it parses and handed to the config's reader, which ranks them
/// above every other source.
struct ConfigFlags {
  /// The keys by flag, but those `GlobalOptions` declares.
  let keys: [String: [String]]
  /// The environment rows by the flag words that end an environment's flag.
  let environmentRows: [String]

  init(_ app: KernelApp) {
    var keys: [String: [String]] = [:]
    var environmentRows: [String] = []
    for setting in app.catalog.table {
      switch setting.scope {
      case .environment: environmentRows.append(setting.name)
      case .app, .file:
        let key = setting.name.split(separator: ".").map(String.init)
        let flag = ConfigFlag.name(key)
        if !GlobalOptions.withValues.contains(flag) { keys[flag] = key }
      }
    }
    // A service's stack: `--books logging,api`, split on commas like its variable.
    for service in app.catalog.serviceKeys { keys[ConfigFlag.name([service])] = [service] }
    self.keys = keys
    self.environmentRows = environmentRows
  }

  /// The key `flag` sets, if it is a config flag.
  func key(_ flag: String) -> [String]? {
    if let key = keys[flag] { return key }
    guard flag.hasPrefix("--environments-") else { return nil }
    let rest = flag.dropFirst("--environments-".count)
    for row in environmentRows {
      let suffix = "-" + ConfigFlag.name([row]).dropFirst(2)
      guard rest.hasSuffix(suffix), rest.count > suffix.count else { continue }
      return ["environments", String(rest.dropLast(suffix.count)), row]
    }
    return nil
  }

  /// `arguments` without the config flags and their values, and the values by dotted key (the
  /// last of a repeated one); a flag with no value is a usage error.
  func extract(_ arguments: [String]) throws -> (arguments: [String], values: [String: String]) {
    var kept: [String] = []
    var values: [String: String] = [:]
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      index += 1
      if argument == "--" {
        kept += arguments[(index - 1)...]
        break
      }
      // `--key=` gives the empty value; it never takes the next argument.
      let parts = argument.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        .map(String.init)
      guard argument.hasPrefix("--"), let name = parts.first, let key = key(name) else {
        kept.append(argument)
        continue
      }
      if parts.count == 2 {
        values[key.joined(separator: ".")] = parts[1]
      } else if index < arguments.endIndex {
        values[key.joined(separator: ".")] = arguments[index]
        index += 1
      } else {
        throw UsageError(
          "\(name) takes a value, as the config key \(key.joined(separator: ".")) does.")
      }
    }
    return (kept, values)
  }

  /// What `--help` says of them, naming the config's own `environments` (an app with no
  /// `local` is never shown `--environments-local-…`).
  func help(prefix: String, environments: [String] = []) -> String {
    let names = keys.keys.sorted()
    let example =
      environments.first.map {
        " (--environments-\(ConfigFlag.name([$0]).dropFirst(2))-base-url URL)"
      }
      ?? ""
    let which =
      environments.isEmpty
      ? "" : "; NAME is one of the config's environments: \(environments.joined(separator: ", "))"
    return "Every config key is a flag too, before or after the command, over its "
      + "\(prefix)_… variable and the file: \(names.joined(separator: ", ")); an environment's "
      + "keys as --environments-NAME-KEY\(example)\(which)."
  }
}
