import ArgumentParser

/// `kernel`: the same commands over whichever stack a profile names.
struct Kernel: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "kernel",
    abstract:
      "Movies from a REST api, a SQLite cache, or both layered, as Config/kernel.yaml says.",
    discussion: """
      Profiles name the stack: api (the api only), offline (the cache only), layered (the cache
      over the api; the default). Global options go before or after the command and can also be
      set by variables: KERNEL_PROFILE, KERNEL_ENVIRONMENT, KERNEL_BASE_URL, KERNEL_CONFIG,
      KERNEL_DATA_DIR, KERNEL_FORMAT. A flag beats a variable, which beats the profile's section
      of the config, which beats its top level.

      Exit codes: 0 ok, 64 usage, 65 bad data from the api, 69 api unreachable and nothing cached,
      77 authentication failed, 78 config error or a cache that cannot be opened; 74 when the
      output cannot be written, 141 when its reader has gone. A cache that cannot be written only
      warns: the answer is still printed.

      Examples:
        kernel movies top-grossing --year 2016
        kernel --profile offline movies top-rated --year 2016 --format json
        kernel serve --port 8080 &
        kernel --profile api --environment local movies get 1 2 3
      """,
    subcommands: [
      MoviesCommand.self, AuthCommand.self, EnvCommand.self, ConfigCommand.self,
      GraphCommand.self, DoctorCommand.self, ServeCommand.self, CacheCommand.self,
    ])

  @OptionGroup var global: GlobalOptions
}

/// How output is printed: a table for people, one JSON object for scripts; the graph also
/// renders as Graphviz dot or Mermaid.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable, Sendable {
  case text, json, dot, mermaid
}

/// The options every command takes, before or after its name.
struct GlobalOptions: ParsableArguments {
  @Option(help: "The stack to build: api, offline or layered. (KERNEL_PROFILE)")
  var profile: String?

  @Option(help: "The api environment, e.g. sample, local, production. (KERNEL_ENVIRONMENT)")
  var environment: String?

  @Option(
    name: .customLong("base-url"), help: "Replaces the environment's base URL. (KERNEL_BASE_URL)")
  var baseURL: String?

  @Option(
    help:
      "The config file; default: ./Config/kernel.yaml if present, else the built-in one. (KERNEL_CONFIG)"
  )
  var config: String?

  @Option(
    name: .customLong("data-dir"),
    help:
      "Where the cache and the saved context live; default: $XDG_DATA_HOME/kernel. (KERNEL_DATA_DIR)"
  )
  var dataDir: String?

  @Option(help: "text (a table) or json; graph also takes dot or mermaid. (KERNEL_FORMAT)")
  var format: OutputFormat?

  @Flag(name: .shortAndLong, help: "Debug log on stderr, secrets redacted.")
  var verbose = false
}
