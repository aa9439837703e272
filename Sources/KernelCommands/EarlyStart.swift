import Composition
import Dispatch
import Foundation
import Synchronization

/// What a run can prepare on a thread of its own while ArgumentParser parses the arguments:
/// the config, read, checked and resolved, the runtime it gives, and the profile's
/// registrations.
///
/// The global options are guessed from the arguments by a plain scan (`GuessedOptions`); what
/// is prepared from the guess is used only when the parsed options turn out to be the same
/// ones, so a wrong guess costs time on the other core, never a different answer. Without
/// `--config`, the file a run reads does not depend on the arguments at all. Only work without
/// effects is done here: registering runs no factory, while validating the graph builds its
/// parts, which can read and tighten the saved context (a warning and a chmod) before the
/// arguments were even accepted, so validation waits for `Session.services()`.
final class EarlyStart: Sendable {
  let app: KernelApp
  let workingDirectory: URL
  let variables: [String: String]
  let guess: GuessedOptions
  // Left as each stage is done (or skipped): the document, the config and runtime, the
  // registrations.
  private let read = DispatchGroup()
  private let resolved = DispatchGroup()
  private let registered = DispatchGroup()
  private let prepared = Mutex(Prepared())

  struct Prepared {
    var document: Result<ConfigDocument, any Error>?
    var config: Result<KernelConfig, any Error>?
    var runtime: Result<Runtime, any Error>?
    var registrations: Result<ProfileRegistrations, any Error>?
  }

  /// Starts preparing what `arguments` (without the program's name) would need.
  init(_ app: KernelApp, arguments: [String]) {
    self.app = app
    workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    variables = EarlyStart.variables(prefix: app.variablePrefix + "_")
    guess = GuessedOptions(arguments)
    guard guess.config == nil else { return }
    read.enter()
    resolved.enter()
    registered.enter()
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      let document = Result {
        try app.load(path: nil, workingDirectory: workingDirectory, variables: variables)
      }
      prepared.withLock { $0.document = document }
      read.leave()
      let made = resolve(document)
      resolved.leave()
      if let (config, runtime) = made {
        let registrations = Result { try app.registrations(config: config, runtime: runtime) }
        prepared.withLock { $0.registrations = registrations }
      }
      registered.leave()
    }
  }

  /// The guessed flags over `document`, resolved, and the runtime for it.
  private func resolve(_ document: Result<ConfigDocument, any Error>) -> (KernelConfig, Runtime)? {
    guard case .success(let read) = document else { return nil }
    let config = Result { try read.with(flags: guess.flags).resolve() }
    prepared.withLock { $0.config = config }
    guard case .success(let resolved) = config else { return nil }
    let runtime = Result {
      try Session.runtime(
        app: app, config: resolved, variables: variables, workingDirectory: workingDirectory,
        verbose: guess.verbose)
    }
    prepared.withLock { $0.runtime = runtime }
    guard case .success(let made) = runtime else { return nil }
    return (resolved, made)
  }

  /// The document read without `--config`, with `flags` over it; or the error reading it gave.
  func document(flags: [String: String]) throws -> ConfigDocument {
    read.wait()
    guard let document = prepared.withLock({ $0.document }) else {
      // Nothing was read: the scan saw a --config that the parse did not.
      return try app.load(
        path: nil, workingDirectory: workingDirectory, variables: variables, flags: flags)
    }
    return try document.get().with(flags: flags)
  }

  /// The resolved config and the runtime prepared for `options`, when they are the guessed
  /// ones; nil when the session must make its own.
  func adopt(_ options: GlobalOptions) -> (
    config: Result<KernelConfig, any Error>, runtime: Result<Runtime, any Error>?
  )? {
    guard GuessedOptions(options) == guess else { return nil }
    resolved.wait()
    guard let config = prepared.withLock({ $0.config }) else { return nil }
    return (config, prepared.withLock { $0.runtime })
  }

  /// The profile's registrations, not yet validated, once; nil when none were made (or they
  /// were taken already). Only for a session that adopted this start.
  func takeRegistrations() -> Result<ProfileRegistrations, any Error>? {
    registered.wait()
    return prepared.withLock { prepared in
      defer { prepared.registrations = nil }
      return prepared.registrations
    }
  }

  /// The environment variables a session reads: the app's own (`<PREFIX>_…`) and the two the
  /// default data dir comes from, read from `environ` without building the whole dictionary.
  static func variables(prefix: String) -> [String: String] {
    let wanted = { (name: String) in
      name.hasPrefix(prefix) || name == "HOME" || name == "XDG_DATA_HOME"
    }
    #if canImport(Glibc)
      var found: [String: String] = [:]
      var entry = environ
      while let pointer = entry.pointee {
        let text = String(cString: pointer)
        if let equals = text.firstIndex(of: "="), wanted(String(text[..<equals])) {
          found[String(text[..<equals])] = String(text[text.index(after: equals)...])
        }
        entry += 1
      }
      return found
    #else
      return ProcessInfo.processInfo.environment.filter { wanted($0.key) }
    #endif
  }
}

/// The global options that change what a session prepares, as the arguments give them.
struct GuessedOptions: Equatable, Sendable {
  var flags: [String: String] = [:]
  var config: String?
  var verbose = false

  /// A plain scan: `--name value` and `--name=value` for the options that take one, `-v` and
  /// `--verbose`, nothing after `--`. It may be wrong (a value that looks like an option);
  /// it is only used when it equals what ArgumentParser parsed.
  init(_ arguments: [String]) {
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if argument == "--" { break }
      if argument == "-v" || argument == "--verbose" {
        verbose = true
        continue
      }
      let name: String
      let value: String?
      if let equals = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        (name, value) = (
          String(argument[..<equals]), String(argument[argument.index(after: equals)...])
        )
      } else if GlobalOptions.withValues.contains(argument), index < arguments.count {
        (name, value) = (argument, arguments[index])
        index += 1
      } else {
        continue
      }
      switch name {
      case "--config": config = value
      case "--format": break
      default:
        if let key = ConfigDocument.flagForKey.first(where: { $0.value == name })?.key {
          flags[key] = value
        }
      }
    }
  }

  /// The same fields from parsed options.
  init(_ options: GlobalOptions) {
    flags["profile"] = options.profile
    flags["environment"] = options.environment
    flags["baseURL"] = options.baseURL
    flags["dataDir"] = options.dataDir
    config = options.config
    verbose = options.verbose
  }
}
