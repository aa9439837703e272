import Configuration
import Domain
import Foundation
import Yams

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A config file, read and checked against the app's schema (its settings table and its
/// services' stacks), with this run's `<PREFIX>_*` variables and flags over it. Values are
/// read through one `ConfigReader` whose providers are, in order of precedence: the flags, the
/// variables, the profile's section, the file's top level, the table's defaults (`resolve`).
public struct ConfigDocument: Sendable {
  /// The file as people should see it named: a path, or "the built-in config".
  public let file: String
  /// Profile names, as the file lists them.
  public let profileNames: [String]
  /// The app whose config this is: its variable prefix, catalog and settings.
  public let app: KernelApp
  private let environmentNames: [String: [String]]
  /// The file's values, checked and typed by the schema.
  let snapshot: InMemoryProvider
  /// The app's `<PREFIX>_…` variables, a key's path in capitals (`KERNEL_RETRY_MAX_RETRIES`);
  /// nil when the run has none, so no read asks them.
  let variables: KeyMappingProvider<EnvironmentVariablesProvider>?
  /// The flags, named by swift-configuration's convention (`--timeouts-call-seconds`), each
  /// value taken as given and typed by its row; nil when the run gave none.
  ///
  /// Not the library's `CommandLineArgumentsProvider`: it splits every value on commas, so a
  /// password or an `oauth2(grant: password, clientId: x)` with a comma could not be given by
  /// flag. Here only a list key's value is split.
  let flags: InMemoryProvider?
  private let written: (variables: [String: String], flags: [String: String])

  /// Parses and checks `text`; `flags` maps config keys (`profile`, `timeouts.callSeconds`) to
  /// the values flags gave them.
  public init(
    text: String, file: String, variables: [String: String] = [:], flags: [String: String] = [:],
    app: KernelApp
  ) throws {
    self.app = app
    let root: Node?
    if let bound = YAMLBounds.problem(in: text) {
      let place = "\(file):\(bound.line):\(bound.column)"
      throw bound.isSyntax
        ? ConfigError.syntax(file: place, problem: bound.problem)
        : ConfigError.refused(file: place, problem: bound.problem)
    }
    do {
      // Only nodes are composed (nothing is constructed from them), and the text is UTF-8: an
      // empty constructor and an explicit encoding spare building Yams' default tag maps and
      // reading the whole environment for YAMS_DEFAULT_ENCODING.
      root = try Yams.compose(yaml: text, .basic, Constructor([:], [:], [:]), .utf8)
    } catch let error as YamlError {
      throw ConfigError.syntax(file: Self.place(of: error, in: file), problem: Self.problem(error))
    }
    guard let root, root.mapping != nil else {
      throw ConfigError.malformed(
        file: file, key: "the file", value: root?.scalar?.string ?? "empty",
        expected: "a section of keys such as profile: and profiles:")
    }
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    try ConfigSchema.file(for: app.catalog).check(root, path: [], file: file, into: &values)
    snapshot = InMemoryProvider(name: file, values: values)
    let profiles = root.mapping?["profiles"]?.mapping
    self.profileNames = profiles?.keys.compactMap(\.string) ?? []
    var environmentNames: [String: [String]] = [
      "": root.mapping?["environments"]?.mapping?.keys.compactMap(\.string) ?? []
    ]
    for (name, section) in profiles ?? [:] {
      let own = section.mapping?["environments"]?.mapping?.keys.compactMap(\.string) ?? []
      environmentNames[name.string ?? ""] = own
    }
    self.environmentNames = environmentNames
    self.file = file
    // An empty variable means unset (`export KERNEL_PROFILE=` clears it), as for the config
    // file's and the output format's.
    let own = variables.filter { $0.key.hasPrefix(app.variablePrefix + "_") && !$0.value.isEmpty }
    let prefix = app.variablePrefix.lowercased()
    self.variables =
      own.isEmpty
      ? nil
      : EnvironmentVariablesProvider(environmentVariables: own).mapKeys {
        AbsoluteConfigKey([prefix] + $0.components)
      }
    self.flags = flags.isEmpty ? nil : Self.flagProvider(flags, catalog: app.catalog)
    written = (own, flags)
  }

  /// The flags' values by key, each typed by its row of the settings table: a list key's value
  /// (a service's stack too) split on commas, a number or a yes/no read as one (left as text
  /// when it is not, so reading it is an error naming the flag), anything else as given.
  static func flagProvider(_ flags: [String: String], catalog: Catalog) -> InMemoryProvider {
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    let services = Set(catalog.serviceKeys)
    for (key, text) in flags {
      let levels = key.split(separator: ".").map(String.init)
      let kind =
        catalog.settings[AppSetting.id(of: levels)]?.kind
        ?? (services.contains(key) ? .list : .string)
      let content: ConfigContent =
        switch kind {
        case .list:
          .stringArray(
            text.split(separator: ",", omittingEmptySubsequences: false).map {
              $0.trimmingSpaces()
            })
        case .integer: Int(text).map { .int($0) } ?? .string(text)
        case .boolean: ConfigSchema.boolean(text).map { .bool($0) } ?? .string(text)
        case .string, .secret: .string(text)
        }
      values[AbsoluteConfigKey(levels)] = ConfigValue(content, isSecret: kind == .secret)
    }
    return InMemoryProvider(name: "the command line", values: values)
  }

  /// The table's defaults, for the top level and every environment of `profile`.
  func defaults(profile: String?) -> InMemoryProvider {
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    for row in app.catalog.settings.values {
      guard let content = row.defaultContent else { continue }
      let value = ConfigValue(content, isSecret: row.kind == .secret)
      switch row.scope {
      case .app, .file: values[AbsoluteConfigKey(row.path)] = value
      case .environment:
        for name in environments(profile: profile) {
          values[AbsoluteConfigKey(["environments", name, row.name])] = value
        }
      }
    }
    return InMemoryProvider(name: "defaults", values: values)
  }

  /// The layers of a read, in order of precedence.
  enum Layer { case flags, variables, profile, file, defaults }

  /// The flag or variable that set `key`, and its text as given.
  func written(_ key: [String], by layer: Layer) -> (name: String, text: String) {
    if layer == .flags {
      let dotted = key.joined(separator: ".")
      return (ConfigFlag.name(key), written.flags[dotted] ?? "")
    }
    let name = ConfigFlag.variable(key, prefix: app.variablePrefix)
    return (name, written.variables[name] ?? "")
  }

  /// The file `--config` / `<PREFIX>_CONFIG` names, else the app's config file under the
  /// working directory when there is one, else the copy built into the app.
  public static func load(
    path: String?, workingDirectory: URL, variables: [String: String] = [:],
    flags: [String: String] = [:], app: KernelApp
  ) throws -> ConfigDocument {
    let variable = "\(app.variablePrefix)_CONFIG"
    if path?.isEmpty == true {
      throw ConfigError.malformed(
        file: "the command line", key: "--config", value: "",
        expected: "a config file's path (leave --config out for the default)")
    }
    // An empty variable means unset, like every other one.
    let explicit = path ?? variables[variable].flatMap { $0.isEmpty ? nil : $0 }
    let directory = workingDirectory.path
    let local = directory + (directory.hasSuffix("/") ? "" : "/") + app.configFile
    let found = FileManager.default.fileExists(atPath: local) ? app.configFile : nil
    guard let chosen = explicit ?? (app.builtInConfig == nil ? app.configFile : found) else {
      return try ConfigDocument(
        text: app.builtInConfig?.yaml ?? "", file: app.builtInConfig?.name ?? app.configFile,
        variables: variables, flags: flags, app: app)
    }
    let url = URL(fileURLWithPath: chosen, relativeTo: workingDirectory)
    let text: String
    do {
      text = try readText(url.path)
    } catch let problem as UnreadableFile {
      let key = path != nil ? "--config" : explicit != nil ? variable : "the file"
      // The app's own file, found from the working directory, and none built in: say where.
      let whereToRun =
        explicit == nil && found == nil
        ? " in \(directory), and \(app.name) has no config built in; run it where"
          + " \(app.configFile) is, or name a file with --config or \(variable)" : ""
      throw ConfigError.unusable(file: chosen, key: key, reason: problem.reason + whereToRun)
    }
    return try ConfigDocument(
      text: text, file: chosen, variables: variables, flags: flags, app: app)
  }

  // MARK: Looking values up

  /// Where a resolved value came from.
  public enum Source: Sendable, Equatable, CustomStringConvertible {
    /// A command-line flag (`--base-url`).
    case flag(String)
    /// An environment variable (`KERNEL_BASE_URL`).
    case variable(String)
    /// The profile's section of the file.
    case profile(String, file: String)
    /// The top level of the file.
    case file(String)
    /// The built-in default.
    case builtInDefault

    public var description: String {
      switch self {
      case .flag(let name): "flag \(name)"
      case .variable(let name): "variable \(name)"
      case .profile(let name, let file): "profile \(name) in \(file)"
      case .file(let file): file
      case .builtInDefault: "default"
      }
    }
  }

  /// Environment names the file and `profile`'s section define.
  /// The environments the file defines, at its top level and in `profile`'s section, sorted.
  public func environments(profile: String?) -> [String] {
    Array(Set((environmentNames[""] ?? []) + (profile.flatMap { environmentNames[$0] } ?? [])))
      .sorted()
  }

  // MARK: Syntax errors

  private static func place(of error: YamlError, in file: String) -> String {
    switch error {
    case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
      "\(file):\(mark.line):\(mark.column)"
    default: file
    }
  }

  private static func problem(_ error: YamlError) -> String {
    switch error {
    case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
      .composer(let context, let problem, _, _):
      [problem, context.map { $0.text }].compactMap { $0 }.joined(separator: " ")
    case .reader(let problem, _, _, _): problem
    default: "\(error)"
    }
  }

  /// Why a config file could not be read, as the system or the bounds say it.
  private struct UnreadableFile: Error { let reason: String }

  /// The UTF-8 text of the regular file at `path`. Its kind and size are checked first, so a
  /// FIFO or a device is never opened (it could block or never end) and a huge file is never
  /// read; every failure is the real reason.
  private static func readText(_ path: String) throws -> String {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw UnreadableFile(reason: "it cannot be read (\(String(cString: strerror(errno))))")
    }
    switch status.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: throw UnreadableFile(reason: "it is a directory, not a file")
    case S_IFIFO: throw UnreadableFile(reason: "it is a FIFO, not a regular file")
    case S_IFCHR, S_IFBLK: throw UnreadableFile(reason: "it is a device, not a regular file")
    case S_IFSOCK: throw UnreadableFile(reason: "it is a socket, not a regular file")
    default: throw UnreadableFile(reason: "it is not a regular file")
    }
    guard Int(status.st_size) <= YAMLBounds.maximumBytes else {
      throw UnreadableFile(
        reason:
          "it is \(status.st_size) bytes; a config is at most \(YAMLBounds.maximumBytes) bytes")
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw UnreadableFile(reason: "it cannot be read (\(String(cString: strerror(errno))))")
    }
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: YAMLBounds.maximumBytes + 1) ?? Data()
    } catch {
      throw UnreadableFile(reason: "it cannot be read (\(fileSystemReason(error)))")
    }
    guard data.count <= YAMLBounds.maximumBytes else {
      throw UnreadableFile(reason: "it is over \(YAMLBounds.maximumBytes) bytes")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw UnreadableFile(reason: "it is not UTF-8 text")
    }
    return text
  }
}
