import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `<app> serve --port 0 …` in its own process (its sample api, or `--fixtures DIR`); its base
/// URL read from its first line.
///
/// Starting, stopping and killing are awaited: the waiting happens on threads of their own,
/// never on Swift's cooperative pool.
public final class ServedCommand: Sendable {
  /// The running `serve`.
  public let process: ChildProcess
  /// The base URL it printed first.
  public let baseURL: String
  /// The first line it printed, which holds the base URL (a sentence, or JSON with
  /// `--format json`).
  public let firstLine: String
  private let errors: Reader
  /// What it prints after the first line.
  private let rest: Reader
  private let leftover: Data

  /// Starts `command serve --port 0` with `options` and waits for its base URL.
  public init(_ command: BuiltCommand, _ options: [String] = []) async throws {
    process = try await command.start(["serve", "--port", "0"] + options)
    guard let handle = process.standardOutput else { throw TestFailure("no stdout pipe") }
    errors = Reader(process.standardError)
    let line = await onThreadOfItsOwn {
      var line = Data()
      while !line.contains(UInt8(ascii: "\n")) {
        let chunk = handle.availableData
        if chunk.isEmpty { break }  // the server exited
        line.append(chunk)
      }
      return line
    }
    let end = line.firstIndex(of: UInt8(ascii: "\n")) ?? line.endIndex
    leftover = line[end...].dropFirst()
    rest = Reader(handle)
    let text = String(decoding: line[..<end], as: UTF8.self)
    firstLine = text
    guard
      let range = text.range(
        of: #"http://(127\.0\.0\.1|\[::1\]):\d+/api/"#, options: .regularExpression)
    else {
      process.terminate()
      throw TestFailure("\(command.name) serve did not start: \(text) \(errors.text())")
    }
    baseURL = String(text[range])
  }

  /// Stops the server with SIGTERM, waits for it to end and returns its summary line.
  @discardableResult public func stop() async -> String {
    terminate()
    return await onThreadOfItsOwn { [process, errors] in
      process.waitUntilExit()
      return errors.text()
    }
  }

  /// What it printed on stdout after its first line, once it has ended (after `stop()`).
  public func output() async -> String {
    await onThreadOfItsOwn { [rest, leftover] in
      String(decoding: leftover, as: UTF8.self) + rest.text()
    }
  }

  /// Sends SIGTERM and does not wait: for `defer`, where nothing can be awaited.
  public func terminate() { process.terminate() }

  /// SIGKILL: no goodbye.
  public func kill() async {
    process.send(SIGKILL)
    await process.exited()
  }
}
