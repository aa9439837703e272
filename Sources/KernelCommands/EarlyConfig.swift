import Composition
import Dispatch
import Foundation
import Synchronization

/// The config read on a thread of its own while the arguments are parsed. Which file a run
/// reads depends on nothing parsing decides unless `--config` is given (the `<PREFIX>_CONFIG`
/// variable, else the app's file in the working directory, else the built-in one), so the
/// file is read and checked beside the parsing; the session then lays the parsed flags over
/// it. With `--config`, or outside `CommandLineApp.run`, the session reads the config itself.
final class EarlyConfig: Sendable {
  let app: KernelApp
  let workingDirectory: URL
  let variables: [String: String]
  private let done = DispatchGroup()
  private let result = Mutex<Result<ConfigDocument, any Error>?>(nil)

  /// Starts reading the config `app` would read with no `--config`.
  init(_ app: KernelApp) {
    self.app = app
    workingDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    variables = EarlyConfig.variables(prefix: app.variablePrefix + "_")
    done.enter()
    DispatchQueue.global(qos: .userInitiated).async { [self] in
      let read = Result {
        try app.load(path: nil, workingDirectory: workingDirectory, variables: variables)
      }
      result.withLock { $0 = read }
      done.leave()
    }
  }

  /// The document, with `flags` over it, once it is read; or the error reading it gave.
  func document(flags: [String: String]) throws -> ConfigDocument {
    done.wait()
    guard let read = result.withLock({ $0 }) else { throw CancellationError() }
    return try read.get().with(flags: flags)
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
