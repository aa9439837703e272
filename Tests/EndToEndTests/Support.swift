import Foundation
import KernelTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The built `kernel`, run as a process (`BuiltCommand` of KernelTesting, as an app's tests use it).
typealias Kernel = BuiltCommand
/// `kernel serve --port 0 …` in its own process.
typealias Server = ServedCommand

extension BuiltCommand {
  /// `kernel` of this package.
  init() throws { try self.init("kernel", package: Snippets.repositoryRoot()) }
}

extension BuiltCommand.Run {
  var movieNames: [String] {
    (json?["movies"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
  }

  /// The ids of a JSON movie answer, in order.
  var movieIDs: [Int] {
    (json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
  }
}

extension Kernel {
  /// The cache database's `PRAGMA integrity_check`, by the `sqlite3` command-line tool.
  func integrityCheck() async throws -> String {
    try await sqlite3("cache.sqlite", "PRAGMA integrity_check;")
  }

  /// What the `sqlite3` command-line tool prints running `sql` on `file` in the data dir.
  func sqlite3(_ file: String, _ sql: String) async throws -> String {
    let process = try await ChildProcess(
      URL(fileURLWithPath: "/usr/bin/env"),
      arguments: ["sqlite3", dataDirectory.appendingPathComponent(file).path, sql])
    let out = Reader(process.standardOutput)
    let err = Reader(process.standardError)
    let (output, errors) = await onThreadOfItsOwn {
      process.waitUntilExit()
      return (out.text(), err.text())
    }
    guard process.terminationStatus == 0 else {
      throw TestFailure("sqlite3 failed (is it installed?): \(errors)")
    }
    return output.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
