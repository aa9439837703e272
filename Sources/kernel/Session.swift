import Api
import Composition
import Domain
import Foundation
import Injection
import Logging

/// One run's resolved config and runtime, built from the global options before any command
/// does work, so a config error is reported before the first request.
struct Session {
  let config: KernelConfig
  let document: ConfigDocument
  let runtime: Runtime
  let format: OutputFormat
  let verbose: Bool

  init(_ options: GlobalOptions, profile: String? = nil) throws {
    let variables = ProcessInfo.processInfo.environment
    var flags: [String: String] = [:]
    flags["profile"] = options.profile
    flags["environment"] = options.environment
    flags["baseURL"] = options.baseURL
    flags["dataDir"] = options.dataDir
    let workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    document = try ConfigDocument.load(
      path: options.config, workingDirectory: workingDirectory, variables: variables, flags: flags)
    let config = try document.resolve(profile: profile)
    self.config = config
    format = try Self.format(options, variables)
    verbose = options.verbose

    let logger = Logger.kernel(verbose: options.verbose)
    let directory = try Self.dataDirectory(config, variables, workingDirectory)
    let chosen = { (key: String) in
      config.settings.first { $0.key == key }.flatMap { setting -> String? in
        switch setting.source {
        case .flag, .variable: setting.value
        default: nil
        }
      }
    }
    runtime = Runtime(
      dataDirectory: directory, environment: chosen("environment"), baseURL: config.baseURL,
      log: { logger.debug("\($0)") }, warn: { Terminal.warn($0) })
  }

  /// The validated container of the profile's stack.
  func container() throws -> Container {
    try prepareDataDirectory()
    return try KernelComposition.bootstrap(config: config, runtime: runtime)
  }

  /// The api side alone (auth, env), whatever the profile.
  func apiContainer() throws -> Container {
    if config.context == .persistent { try prepareDataDirectory() }
    return try KernelComposition.bootstrapApi(config: config, runtime: runtime)
  }

  /// Creates the data dir (0700) if needed and checks it can be written: a config error
  /// naming the key that chose it, before anything is stored.
  func prepareDataDirectory() throws {
    let path = runtime.dataDirectory.path
    let setting = config.settings.first { $0.key == "dataDir" }
    func unusable(_ reason: String) -> ConfigError {
      switch setting?.source {
      case .flag(let flag)?:
        .unusable(file: "the command line", key: "\(flag) \(path)", reason: reason)
      case .variable(let name)?:
        .unusable(file: "the environment", key: "\(name) \(path)", reason: reason)
      case .profile(let profile, let file)?:
        .unusable(file: file, key: "profiles.\(profile).dataDir \(path)", reason: reason)
      case .file(let file)? where setting?.value.isEmpty == false:
        .unusable(file: file, key: "dataDir \(path)", reason: reason)
      default: .unusable(file: "the default data dir", key: path, reason: reason)
      }
    }
    do {
      try FileManager.default.createDirectory(
        atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    } catch {
      throw unusable("it cannot be created (\((error as NSError).localizedDescription))")
    }
    guard access(path, W_OK | X_OK) == 0 else {
      throw unusable("it is not writable by you; choose another with --data-dir")
    }
  }

  private static func format(_ options: GlobalOptions, _ variables: [String: String]) throws
    -> OutputFormat
  {
    if let format = options.format { return format }
    guard let text = variables["KERNEL_FORMAT"], !text.isEmpty else { return .text }
    guard let format = OutputFormat(rawValue: text) else {
      throw UsageError("KERNEL_FORMAT is \"\(text)\", but it must be text or json.")
    }
    return format
  }

  /// `dataDir` from the config, else `$XDG_DATA_HOME/kernel`, else `~/.local/share/kernel`.
  private static func dataDirectory(
    _ config: KernelConfig, _ variables: [String: String], _ workingDirectory: URL
  ) throws -> URL {
    if !config.dataDir.isEmpty {
      return URL(fileURLWithPath: config.dataDir, relativeTo: workingDirectory).standardizedFileURL
    }
    if let xdg = variables["XDG_DATA_HOME"], xdg.hasPrefix("/") {
      return URL(fileURLWithPath: xdg).appendingPathComponent("kernel")
    }
    guard let home = variables["HOME"], !home.isEmpty else {
      throw ConfigError.unusable(
        file: "the environment", key: "HOME",
        reason: "it is not set, so there is no default data dir; pass --data-dir")
    }
    return URL(fileURLWithPath: home).appendingPathComponent(".local/share/kernel")
  }
}

/// A mistake in how the command was called: exit 64.
struct UsageError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

extension Logger {
  /// Debug lines on stderr with `--verbose`; nothing otherwise.
  static func kernel(verbose: Bool) -> Logger {
    var logger = Logger(label: "kernel") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = verbose ? .debug : .critical
    return logger
  }
}
