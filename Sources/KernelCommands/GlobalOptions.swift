import ArgumentParser

/// How output is printed: a table for people, one JSON object for scripts; the graph also
/// renders as Graphviz dot or Mermaid.
public enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
  case text, json, dot, mermaid
}

/// The options every command takes, before or after its name; an app's command takes them
/// with `@OptionGroup var global: GlobalOptions` and hands them to `Session`.
public struct GlobalOptions: ParsableArguments, Sendable {
  @Option(help: GlobalOptions.help("The stack to build: api, offline or layered.", "PROFILE"))
  public var profile: String?

  @Option(
    help: GlobalOptions.help("The api environment, e.g. staging, production.", "ENVIRONMENT"))
  public var environment: String?

  @Option(
    name: .customLong("base-url"),
    help: GlobalOptions.help("Replaces the environment's base URL.", "BASE_URL"))
  public var baseURL: String?

  @Option(help: GlobalOptions.configHelp) public var config: String?

  @Option(name: .customLong("data-dir"), help: GlobalOptions.dataDirHelp)
  public var dataDir: String?

  @Option(
    help: GlobalOptions.help("text (a table) or json; graph also takes dot or mermaid.", "FORMAT"))
  public var format: OutputFormat?

  @Flag(name: .shortAndLong, help: "Debug log on stderr, secrets redacted.")
  public var verbose = false

  public init() {}

  /// The options that take a value as the next argument.
  static let withValues: Set<String> = [
    "--profile", "--environment", "--base-url", "--config", "--data-dir", "--format",
  ]

  private static func help(_ text: String, _ key: String) -> ArgumentHelp {
    ArgumentHelp("\(text) (\(CommandLineApp.current.app.variablePrefix)_\(key))")
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
