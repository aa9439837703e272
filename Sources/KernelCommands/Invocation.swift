import Composition
import Domain
import Foundation
import Logging

/// One run of a command (an invocation): its resolved config and runtime, built from the global
/// options before the command does work, so a config error is reported before the first
/// request. An app's command makes one first thing in `run`, then reaches the profile's
/// services through `fetch`. (Not to be confused with the `.session` scope, which is what a login
/// builds and a
/// logout drops, nor with `Composed.endSession()`, which drops it.)
///
/// ```swift
/// let invocation = try Invocation(global)
/// let shelf = try await invocation.answer(.shelf, from: "books")
/// ```
public struct Invocation: Sendable {
  /// The app being run (`CommandLineApp.current.app`).
  public let app: KernelApp
  /// The config as read: file, variables and flags.
  public let config: KernelConfig
  /// The config file, and where each value came from.
  public let document: ConfigDocument
  /// The run's clock, log and data dir.
  public let runtime: Runtime
  /// How to print: `--format`, or text.
  public let format: OutputFormat
  /// Whether `-v` asked for the debug log.
  public let verbose: Bool

  /// `formats`: the output formats the command has; any other is a usage error (exit 64).
  public init(
    _ options: GlobalOptions, profile: String? = nil, formats: [OutputFormat] = [.text, .json]
  ) throws {
    let line = CommandLineApp.current
    let app = line.app
    self.app = app
    let variables = Self.variables(line.environment, prefix: app.variablePrefix + "_")
    let workingDirectory = line.directory
    document = try app.load(
      path: options.config, workingDirectory: workingDirectory, variables: variables,
      flags: Self.flags(options))
    let config = try document.resolve(profile: profile)
    self.config = config
    if profile == nil { Self.warnOfSecretFlags(config, app: app) }
    format = try Self.format(
      options, variables, variable: "\(app.variablePrefix)_FORMAT", allowed: formats)
    verbose = options.verbose
    runtime = try Self.runtime(
      app: app, config: config, variables: variables, workingDirectory: workingDirectory,
      verbose: options.verbose)
    if options.verbose { Phases.report(to: runtime.log) }
    Phases.mark("config")
  }

  /// The run's runtime: the data dir the config and variables choose, the environment a flag
  /// or variable chose, and the `-v` log and warnings on stderr.
  static func runtime(
    app: KernelApp, config: KernelConfig, variables: [String: String], workingDirectory: URL,
    verbose: Bool
  ) throws -> Runtime {
    let logger = Logger.kernel(app.name, verbose: verbose)
    let directory = try app.dataDirectory(
      config: config, variables: variables, workingDirectory: workingDirectory)
    let chosen = { (key: String) in
      config.settings.first { $0.key == key }.flatMap { setting -> String? in
        switch setting.source {
        case .flag, .variable: setting.value
        default: nil
        }
      }
    }
    return Runtime(
      dataDirectory: directory, environment: chosen("environment"), baseURL: config.baseURL,
      log: { logger.debug("\(TerminalText.escaped($0))") }, warn: { Terminal.warn($0) })
  }

  /// The profile's validated graph, for a command that reads or writes the data dir: the dir
  /// is created first, so an unusable one is a config error before any request.
  func services() throws -> Composed {
    try prepareDataDirectory()
    let composed = try inspect()
    Phases.mark("container")
    return composed
  }

  /// Warns of each secret a flag gave: a command line is readable by every user of the machine
  /// (`ps`, `/proc/PID/cmdline`), so the secret is as good as shared.
  static func warnOfSecretFlags(_ config: KernelConfig, app: KernelApp) {
    let secrets = Set(app.catalog.table.filter { $0.kind == .secret }.map(\.id))
    for setting in config.settings {
      guard case .flag(let flag) = setting.source else { continue }
      let levels = setting.key.split(separator: ".").map(String.init)
      guard secrets.contains(AppSetting.id(of: levels)) else { continue }
      Terminal.warn(
        "\(flag) puts a secret on the command line, where any user of this machine can read it"
          + " (ps); set \(ConfigFlag.variable(levels, prefix: app.variablePrefix)) or the config"
          + " file instead.")
    }
  }

  /// The config keys the parsed global options set, by key (`profile`, `baseURL`…).
  static func flags(_ options: GlobalOptions) -> [String: String] {
    var flags = CommandLineApp.current.configFlags
    flags["profile"] = options.profile
    flags["environment"] = options.environment
    flags["baseURL"] = options.baseURL
    flags["dataDir"] = options.dataDir
    return flags
  }

  /// The environment variables an invocation reads: the app's own (`<PREFIX>_…`) and the two the
  /// default data dir comes from.
  static func variables(_ all: [String: String], prefix: String) -> [String: String] {
    all.filter {
      $0.key.hasPrefix(prefix) || $0.key == "HOME" || $0.key == "XDG_DATA_HOME"
    }
  }

  /// The profile's validated graph, creating nothing: for graph, doctor and cache stats.
  func inspect() throws -> Composed {
    try app.compose(config: config, runtime: runtime)
  }

  /// The api side (auth, env), whatever the profile; the data dir is created first when the
  /// context keeps the token there.
  func api() throws -> ApiAccess {
    let composed = try inspect()
    if composed.contextPersists { try prepareDataDirectory() }
    return try composed.api()
  }

  /// Where the data dir stands, creating nothing: writable, to be created in a writable
  /// folder, or unusable (a config error naming the key that chose it).
  func checkDataDirectory() throws -> String {
    let path = runtime.dataDirectory.path
    var isDirectory: ObjCBool = false
    if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
      guard isDirectory.boolValue else { throw unusable("it is a file, not a folder") }
      guard access(path, W_OK | X_OK) == 0 else {
        throw unusable("it is not writable by you; choose another with --data-dir")
      }
      return "\(path) is writable"
    }
    var parent = runtime.dataDirectory.deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: parent.path) && parent.path != "/" {
      parent = parent.deletingLastPathComponent()
    }
    guard access(parent.path, W_OK | X_OK) == 0 else {
      throw unusable("it does not exist and \(parent.path) is not writable by you")
    }
    return "\(path) will be created when something is stored"
  }

  /// Creates the data dir (0700) if needed and checks it can be written: a config error
  /// naming the key that chose it, before anything is stored.
  func prepareDataDirectory() throws {
    let path = runtime.dataDirectory.path
    do {
      // The parents as usual; the dir itself by mkdir with its mode, never open to others for
      // a moment (FileManager makes it, then changes its mode).
      try FileManager.default.createDirectory(
        atPath: runtime.dataDirectory.deletingLastPathComponent().path,
        withIntermediateDirectories: true)
      guard mkdir(path, 0o700) == 0 || errno == EEXIST else {
        throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
      }
    } catch {
      throw unusable("it cannot be created (\(fileSystemReason(error)))")
    }
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw unusable("it cannot be created (a link to nothing is in its place)")
    }
    guard isDirectory.boolValue else { throw unusable("it is a file, not a folder") }
    guard access(path, W_OK | X_OK) == 0 else {
      throw unusable("it is not writable by you; choose another with --data-dir")
    }
    // It holds tokens: nobody else may list or read it. A folder of Kernel's own is made
    // private; a shared one (/tmp, a home) is never changed, only refused.
    var status = stat()
    if stat(path, &status) == 0, status.st_mode & 0o077 != 0 {
      let loose = String(status.st_mode & 0o7777, radix: 8)
      let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? ["?"]
      guard names.allSatisfy(Self.isKernelFile) else {
        throw unusable(
          "it is open to others (\(loose)) and holds files that are not Kernel's; give Kernel a folder of its own"
        )
      }
      guard chmod(path, 0o700) == 0 else {
        throw unusable(
          "it is open to others (\(loose)) and cannot be made private (\(String(cString: strerror(errno))))"
        )
      }
      runtime.warn("The data dir \(path) was open to others (\(loose)); it is now 0700.")
    }
  }

  /// Whether `name` is a file Kernel keeps in its data dir.
  static func isKernelFile(_ name: String) -> Bool {
    name.hasPrefix("cache.sqlite") || name.hasPrefix("outbox.sqlite")
      || name.hasPrefix("context.json") || name.hasPrefix(".context.json.")
  }

  /// A config error naming the key that chose the data dir.
  private func unusable(_ reason: String) -> ConfigError {
    let path = runtime.dataDirectory.path
    guard let written = config.written("dataDir"),
      config.settings.contains(where: { $0.key == "dataDir" && !$0.value.isEmpty })
    else { return .unusable(file: "the default data dir", key: path, reason: reason) }
    return .unusable(file: written.file, key: "\(written.key) \(path)", reason: reason)
  }

  /// The format of a command that reads no config (`serve`): `--format`, else the app's
  /// `<PREFIX>_FORMAT` variable, else text; a usage error (64) naming either for one not
  /// `allowed`.
  package static func format(_ options: GlobalOptions, allowed: [OutputFormat]) throws
    -> OutputFormat
  {
    let line = CommandLineApp.current
    return try format(
      options, line.environment, variable: "\(line.app.variablePrefix)_FORMAT", allowed: allowed)
  }

  private static func format(
    _ options: GlobalOptions, _ variables: [String: String], variable: String,
    allowed: [OutputFormat]
  ) throws -> OutputFormat {
    var choices: String {
      let names = allowed.map(\.rawValue)
      return names.dropLast().joined(separator: ", ") + " or " + (names.last ?? "text")
    }
    if let format = options.format {
      guard allowed.contains(format) else {
        throw UsageError(
          "--format \(format.rawValue) is not a format of this command; it prints \(choices).")
      }
      return format
    }
    guard let text = variables[variable], !text.isEmpty else { return .text }
    guard let format = OutputFormat(rawValue: text), allowed.contains(format) else {
      throw UsageError("\(variable) is \"\(text)\", but this command prints \(choices).")
    }
    return format
  }
}

/// A mistake in how the command was called: exit 64, and `description` as its sentence.
public struct UsageError: Error, CustomStringConvertible {
  public let description: String
  /// A usage error saying `description`.
  public init(_ description: String) { self.description = description }
}

extension Logger {
  /// Debug lines on stderr with `--verbose`; nothing otherwise.
  static func kernel(_ label: String, verbose: Bool) -> Logger {
    var logger = Logger(label: label) { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = verbose ? .debug : .critical
    return logger
  }
}
