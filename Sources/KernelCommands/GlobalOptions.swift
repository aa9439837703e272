import ArgumentParser

/// How output is printed: a table for people, one JSON object for scripts; the graph also
/// renders as Graphviz dot or Mermaid.
public enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
  /// A table (`text`), one JSON object (`json`), Graphviz (`dot`) or Mermaid (`mermaid`).
  case text, json, dot, mermaid
}

/// The options every command takes, before or after its name; an app's command takes them
/// with `@OptionGroup var global: GlobalOptions` and hands them to `Invocation`.
public struct GlobalOptions: ParsableArguments, Sendable {
  /// `--profile`: the stack to build.
  @Option(help: GlobalOptions.help("The stack to build: api, offline or layered.", "PROFILE"))
  public var profile: String?

  /// `--environment`: the api environment.
  @Option(help: GlobalOptions.environmentHelp) public var environment: String?

  /// `--base-url`: replaces the environment's base URL.
  @Option(
    name: .customLong("base-url"),
    help: GlobalOptions.help("Replaces the environment's base URL.", "BASE_URL"))
  public var baseURL: String?

  /// `--config`: the config file to read.
  @Option(help: GlobalOptions.configHelp) public var config: String?

  /// `--data-dir`: where the cache, the outbox and the context live.
  @Option(name: .customLong("data-dir"), help: GlobalOptions.dataDirHelp)
  public var dataDir: String?

  /// `--format`: text or json (the graph also dot or mermaid).
  @Option(
    help: GlobalOptions.help("text (a table) or json; graph also takes dot or mermaid.", "FORMAT"))
  public var format: OutputFormat?

  /// `-v`: the debug log on stderr, secrets redacted.
  @Flag(name: .shortAndLong, help: "Debug log on stderr, secrets redacted.")
  public var verbose = false

  public init() {}

  /// The options that take a value as the next argument.
  static let withValues: Set<String> = [
    "--profile", "--environment", "--base-url", "--config", "--data-dir", "--format",
  ]

  /// The most arguments parsed after repeats are folded and bulk numbers taken out:
  /// ArgumentParser's time grows with the square of their count (4,000 repeated options took
  /// 5.6 s in release), and no command needs this many words.
  static let maximumArguments = 1_000

  /// `arguments` with each global option given once: the last `--profile x` (or
  /// `--profile=x`) of several is the one that counts, as ArgumentParser would take it, and
  /// `-v` once however often it is repeated. Nothing after `--` is touched. One pass.
  static func foldingRepeats(_ arguments: [String]) -> [String] {
    var lastAt: [String: Int] = [:]
    var index = 0
    var end = arguments.count
    while index < arguments.count {
      let argument = arguments[index]
      if argument == "--" {
        end = index
        break
      }
      let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
      if withValues.contains(name) {
        lastAt[name] = index
        if !argument.contains("=") { index += 1 }
      } else if argument == "-v" || argument == "--verbose" {
        lastAt["--verbose"] = lastAt["--verbose"] ?? index
      }
      index += 1
    }
    var kept: [String] = []
    kept.reserveCapacity(arguments.count)
    index = 0
    while index < end {
      let argument = arguments[index]
      let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
      if withValues.contains(name) {
        let takesNext = !argument.contains("=")
        if lastAt[name] == index {
          kept.append(argument)
          if takesNext && index + 1 < end { kept.append(arguments[index + 1]) }
        }
        index += takesNext ? 2 : 1
        continue
      }
      if argument == "-v" || argument == "--verbose" {
        if lastAt["--verbose"] == index { kept.append(argument) }
      } else {
        kept.append(argument)
      }
      index += 1
    }
    return kept + arguments[end...]
  }

  private static func help(_ text: String, _ key: String) -> ArgumentHelp {
    ArgumentHelp("\(text) (\(CommandLineApp.current.app.variablePrefix)_\(key))")
  }

  /// Names the config's own environments when help has read them (`CommandLineApp.run`).
  private static var environmentHelp: ArgumentHelp {
    let names = CommandLineApp.current.helpEnvironments
    let which =
      names.isEmpty
      ? "as the config names it" : "one of the config's: \(names.joined(separator: ", "))"
    return help("The api environment, \(which).", "ENVIRONMENT")
  }

  private static var configHelp: ArgumentHelp {
    let app = CommandLineApp.current.app
    let otherwise = app.builtInConfig == nil ? "" : " if present, else the built-in one"
    return help("The config file; default: ./\(app.configFile)\(otherwise).", "CONFIG")
  }

  private static var dataDirHelp: ArgumentHelp {
    let name = CommandLineApp.current.app.dataDirectoryName
    return help(
      "Where the cache and the saved context live; default: $XDG_DATA_HOME/\(name).", "DATA_DIR")
  }
}

extension ParsableArguments {
  /// A usage error naming `option` and its range when `value` is out of it (`--port must be
  /// from 0 to 65535, not 70000.`), for an app's own options too.
  public static func check(_ option: String, _ value: Int, in range: ClosedRange<Int>) throws {
    guard range.contains(value) else {
      throw ValidationError(
        "\(option) must be from \(range.lowerBound) to \(range.upperBound), not \(value).")
    }
  }
}
