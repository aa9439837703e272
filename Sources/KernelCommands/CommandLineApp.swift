import ArgumentParser
import Composition
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An app's command line: Kernel's generic commands (`config show`, `graph`, `doctor`,
/// `env`, `auth`, `cache`, `outbox`, and `serve` when the app names it) under the app's name,
/// prefix, config file and data dir, beside the app's own commands, with Kernel's exit codes and
/// one-sentence failures.
///
/// An app's `main` is a type conforming to `CommandLineMain` (below) that returns one of these.
public struct CommandLineApp: Sendable {
  /// The app: its name, variable prefix, config file, data dir and catalog.
  public var app: KernelApp
  /// One line for `--help`.
  public var abstract: String
  /// Examples and notes, after the options and exit codes in `--help`.
  public var examples: String
  /// The app's own commands, listed before Kernel's.
  public var commands: [any ParsableCommand.Type]
  /// Commands whose many numeric arguments are taken out before parsing (see `BulkArguments`).
  public var bulkArguments: [BulkArguments]
  /// The app's own version, which `--version` prints with Kernel's (`books 1.2 (Kernel 0.1.0)`);
  /// nil, the default: Kernel's alone (`books (Kernel 0.1.0)`).
  public var version: String?
  /// The app's own fixture folder (relative to the working directory), what `serve` answers
  /// without `--fixtures`; nil: its sample api, if it has one. Set with `serve` by KernelServe's
  /// `serving(fixtures:)` or `serving(_:fixtures:)`.
  public var fixtures: String?
  /// Kernel's `serve`, listed among Kernel's commands: nil, the default, for none, so the app's
  /// command line does not link the server; KernelServe's `serving` sets it.
  public var serve: (any ParsableCommand.Type)?

  /// The command line of `app`: Kernel's commands and `commands`, `abstract` and `examples` in its
  /// help; `bulkArguments` as the property above says.
  public init(
    _ app: KernelApp, abstract: String, examples: String = "",
    commands: [any ParsableCommand.Type] = [], bulkArguments: [BulkArguments] = []
  ) {
    self.app = app
    self.abstract = abstract
    self.examples = examples
    self.commands = commands
    self.bulkArguments = bulkArguments
  }

  /// The command line being run; commands read the app and the output from here, as
  /// ArgumentParser makes each command with no way to hand it anything.
  @TaskLocal static var running: CommandLineApp?
  /// The root command's configuration for the one being run.
  @TaskLocal static var rootConfiguration: CommandConfiguration?

  /// The one being run, else a plain app named `app` (a command parsed outside `main`).
  public static var current: CommandLineApp {
    running ?? CommandLineApp(KernelApp(name: "app"), abstract: "")
  }

  /// The run's environment variables.
  var environment: [String: String] { variables ?? ProcessInfo.processInfo.environment }

  /// The run's working directory: what relative paths in its arguments are read against.
  public var directory: URL {
    workingDirectory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
  }

  /// Kernel's generic commands, in the order `--help` lists them after the app's; `serve` when
  /// the app names it.
  var generic: [any ParsableCommand.Type] {
    [AuthCommand.self, EnvCommand.self, ConfigCommand.self, GraphCommand.self, DoctorCommand.self]
      + (serve.map { [$0] } ?? []) + [CacheCommand.self, OutboxCommand.self, SyncCommand.self]
  }

  /// Where this run writes; `standard` unless `run` was given another.
  public private(set) var output = Output.standard
  /// The environment variables this run reads; the process's unless `run` was given others.
  public private(set) var variables: [String: String]?
  /// The folder relative paths are read from; the process's unless `run` was given another.
  public private(set) var workingDirectory: URL?
  /// The values of the config flags this run was given, by key (`ConfigFlags`).
  private(set) var configFlags: [String: String] = [:]
  /// The config's environments, read only for `--help`.
  private(set) var helpEnvironments: [String] = []

  /// Runs the command `arguments` names (without the program's name) in this process, writing
  /// to `output`, reading `variables` and paths relative to `workingDirectory` (the process's
  /// own when nil); returns the exit code. Every failure is a thrown error carrying its code,
  /// reported here as one sentence: nothing in a run exits the process.
  public func run(
    _ arguments: [String], output: Output = .standard, variables: [String: String]? = nil,
    workingDirectory: URL? = nil
  ) async -> Int32 {
    var line = self
    line.output = output
    line.variables = variables
    line.workingDirectory = workingDirectory
    // Help names the config's own environments; the config is read for it only when asked.
    if arguments.contains(where: { ["-h", "--help", "help"].contains($0) }) {
      line.helpEnvironments =
        (try? app.load(
          path: nil, workingDirectory: line.directory,
          variables: line.environment.filter { $0.key.hasPrefix(app.variablePrefix + "_") }))?
        .environments(profile: nil) ?? []
    }
    // The config flags are worked out once a run: the root's help names them, and they are
    // taken out of the arguments before parsing.
    let configFlags = ConfigFlags(app)
    return await Self.$running.withValue(line) {
      await Self.$rootConfiguration.withValue(
        AppCommand.configuration(of: line, configFlags: configFlags)
      ) {
        await parseAndRun(arguments, configFlags: configFlags)
      }
    }
  }

  private func parseAndRun(_ arguments: [String], configFlags: ConfigFlags) async -> Int32 {
    var arguments = arguments
    var numbers: [String]?
    do {
      // Config flags first: their values (`--timeouts-call-seconds 5`) are never taken for a
      // command's numbers.
      let flags = try configFlags.extract(arguments)
      arguments = flags.arguments
      for bulk in bulkArguments {
        let (kept, taken) = bulk.split(arguments)
        if let taken {
          (arguments, numbers) = (kept, taken)
          break
        }
      }
      arguments = GlobalOptions.foldingRepeats(arguments)
      if let negative = arguments.first(where: Self.isNegativeNumber) {
        throw UsageError(
          "\(negative) is a negative number, and no argument of \(app.name) takes one; ids,"
            + " scores and counts are positive whole numbers.")
      }
      var line = Self.current
      line.configFlags = flags.values
      guard arguments.count <= GlobalOptions.maximumArguments else {
        throw UsageError(
          "The command line has \(arguments.count) arguments, more than the"
            + " \(GlobalOptions.maximumArguments) a command takes; give a long list of ids on"
            + " standard input (-) instead.")
      }
      try await Self.$running.withValue(line) {
        try await BulkArguments.$current.withValue(numbers) {
          var command = try AppCommand.parseAsRoot(arguments)
          Phases.mark("arguments")
          if var asynchronous = command as? any AsyncParsableCommand {
            try await asynchronous.run()
          } else {
            try command.run()
          }
        }
      }
      Phases.finish("output")
      return 0
    } catch {
      return Failure.report(error)
    }
  }
}

extension CommandLineApp {
  /// `-1`: what ArgumentParser would take for an unknown option and report as a missing
  /// argument.
  static func isNegativeNumber(_ argument: String) -> Bool {
    argument.count > 1 && argument.hasPrefix("-")
      && argument.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
  }
}

/// The entry of an app's command: `@main` on a type that says which command line it is.
///
/// ```swift
/// @main struct Books: CommandLineMain {
///   static let commandLine = CommandLineApp(
///     .books, abstract: "Books from the api or the cache.", commands: [BookCommand.self])
/// }
/// ```
///
/// Put it in a file not named main.swift: there Swift would look for top-level code instead.
/// `commandLine` is read once, after the process is prepared (standard descriptors, signals): a
/// `static let` is made then, on first use.
public protocol CommandLineMain {
  /// The app's command line.
  static var commandLine: CommandLineApp { get }
}

extension CommandLineMain {
  /// Runs the command `CommandLine.arguments` names and exits: every failure is one sentence on
  /// stderr and its exit code. On the main actor, so its first lines run on the main thread
  /// before anything else: the descriptors are guarded before Swift's concurrency runtime opens
  /// its own (its event queue would take a closed stdout's number). A nonisolated entry would
  /// start on the pool, which opens them first; a `dispatchMain` entry would block SIGQUIT.
  @MainActor public static func main() async {
    Terminal.guardStandardDescriptors()
    // Past a file-size limit (`ulimit -f`), a write fails with EFBIG, which SQLite reports as a
    // full disk, instead of the signal ending the process with the answer unprinted.
    signal(SIGXFSZ, SIG_IGN)
    // A closed pipe is an error of `write`, which `Terminal` turns into a quiet exit (141), not
    // a signal that could land in the middle of a cache write.
    signal(SIGPIPE, SIG_IGN)
    // SIGQUIT quits, as it does for any program; Swift's runtime would print a crash report
    // for it and carry on.
    signal(SIGQUIT, SIG_DFL)
    Phases.start()
    let line = commandLine
    Phases.mark("app")
    let code = await line.run(Array(CommandLine.arguments.dropFirst()))
    exit(code)
  }
}

/// The root command: the app's name, its commands and Kernel's.
struct AppCommand: AsyncParsableCommand {
  /// ArgumentParser asks for it many times a parse: built once per run.
  static var configuration: CommandConfiguration {
    CommandLineApp.rootConfiguration ?? configuration(of: CommandLineApp.current)
  }

  static func configuration(
    of line: CommandLineApp, configFlags: ConfigFlags? = nil
  ) -> CommandConfiguration {
    let prefix = line.app.variablePrefix
    let name = line.app.name
    let variables = ["PROFILE", "ENVIRONMENT", "BASE_URL", "CONFIG", "DATA_DIR", "FORMAT"]
      .map { "\(prefix)_\($0)" }.joined(separator: ", ")
    let version =
      (line.version.map { "\(name) \($0)" } ?? name) + " (Kernel \(KernelApp.kernelVersion))"
    return CommandConfiguration(
      commandName: name, abstract: line.abstract,
      discussion: """
        Profiles name each service's stack in \(line.app.configFile): api (the api only), \
        offline (the cache only), layered (the cache over the api). Global options go before or \
        after the command and can also be set by variables: \(variables). A flag beats a \
        variable, which beats the profile's section of the config, which beats its top level. \
        \((configFlags ?? ConfigFlags(line.app)).help(prefix: prefix, environments: line.helpEnvironments))

        Exit codes: 0 ok, 64 usage, 65 bad data from the api or a request it refused (4xx but \
        these), 66 not found (404, 410), 69 api unreachable or failing (5xx, 408, 429) and \
        nothing cached, 77 authentication failed (401, 403), 78 config error or a cache that \
        cannot be opened; 74 \
        when the output cannot be written, 141 when its reader has gone; 70 a failure Kernel \
        could not name (a fault of its own: please report it with the -v log). A cache that \
        cannot be written only warns: the answer is still printed.
        """ + (line.examples.isEmpty ? "" : "\n\n" + line.examples), version: version,
      subcommands: line.commands + line.generic)
  }

  @OptionGroup var global: GlobalOptions
}
