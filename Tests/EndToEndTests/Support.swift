import Foundation
import KernelTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The built `kernel` binary, run as a separate process with a private home, data dir and
/// working directory, and no `KERNEL_*` variable but the ones a test sets.
struct Kernel {
  let home: URL
  let workingDirectory: URL

  init() throws {
    home = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-e2e-\(UUID().uuidString)")
    workingDirectory = home.appendingPathComponent("work")
    try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: true)
  }

  /// The binary SwiftPM built beside this test bundle.
  static var binary: URL {
    get throws {
      let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("kernel")
      let build = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".build/debug/kernel")
      for candidate in [beside, build]
      where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
      }
      throw TestFailure(
        "the kernel binary was not built (looked in \(beside.path)); run swift build")
    }
  }

  struct Run: CustomStringConvertible {
    let status: Int32
    let stdout: String
    let stderr: String
    var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    var json: [String: Any]? {
      (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
    var movieNames: [String] {
      (json?["movies"] as? [[String: Any]])?.compactMap { $0["name"] as? String } ?? []
    }
  }

  var environment: [String: String] {
    [
      "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
      "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
    ]
  }

  var dataDirectory: URL { home.appendingPathComponent("data/kernel") }

  /// Runs `kernel arguments` to its end; kills it and fails when it is still running after
  /// `limit`, so a hang is reported as one instead of stalling the suite.
  ///
  /// Async, and waiting on a thread of its own: a test blocked on a child would hold one of the
  /// few threads of Swift's cooperative pool and starve the async tests running beside it.
  func run(
    _ arguments: [String], variables: [String: String] = [:], within limit: Duration = .seconds(60),
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) async throws -> Run {
    try await launch(
      arguments, variables: variables, fileSizeLimitKB: fileSizeLimitKB, input: input
    )
    .finish(within: limit)
  }

  /// Runs `script` with bash, `$KERNEL` naming the binary: for redirections a test cannot make
  /// with `Process` (`>/dev/full`, `>&-`).
  func shell(_ script: String, variables: [String: String] = [:]) async throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", script]
    process.environment = environment.merging(variables) { _, new in new }
      .merging(["KERNEL": try Self.binary.path]) { _, new in new }
    process.currentDirectoryURL = workingDirectory
    process.standardOutput = Pipe()
    process.standardError = Pipe()
    process.standardInput = FileHandle.nullDevice
    let running = Running(
      process: process, stdout: Reader(process.standardOutput),
      stderr: Reader(process.standardError))
    try process.run()
    return try await running.finish(within: .seconds(60))
  }

  /// A `kernel` still running, its output drained as it comes.
  struct Running {
    let process: Process
    let stdout: Reader
    let stderr: Reader

    /// Waits for the end, killing it and failing past `limit`.
    func finish(within limit: Duration) async throws -> Run {
      let ended = await Exit(process).wait(limit)
      // The pipes close as the process ends; their last bytes are collected off the pool.
      let (out, err) = await onThreadOfItsOwn { [stdout, stderr] in (stdout.text(), stderr.text()) }
      guard ended else {
        throw TestFailure(
          "kernel \(process.arguments?.joined(separator: " ") ?? "") ran past \(limit);"
            + " stderr: \(err)")
      }
      return Run(status: process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts `kernel arguments`; stderr goes to `terminal` when given, else to a pipe.
  func launch(
    _ arguments: [String], variables: [String: String] = [:], terminal: PseudoTerminal? = nil,
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) throws -> Running {
    let process = try start(
      arguments, variables: variables, terminal: terminal, fileSizeLimitKB: fileSizeLimitKB,
      input: input)
    return Running(
      process: process, stdout: Reader(process.standardOutput),
      stderr: Reader(process.standardError))
  }

  /// With `fileSizeLimitKB`, bash's `ulimit -f` runs it: writes past that size fail, as
  /// on a full disk.
  func start(
    _ arguments: [String], variables: [String: String] = [:], terminal: PseudoTerminal? = nil,
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) throws -> Process {
    let process = Process()
    if let limit = fileSizeLimitKB {
      process.executableURL = URL(fileURLWithPath: "/bin/bash")  // ulimit -f in KiB
      process.arguments =
        ["-c", "ulimit -f \(limit) && exec \"$0\" \"$@\"", try Self.binary.path] + arguments
    } else {
      process.executableURL = try Self.binary
      process.arguments = arguments
    }
    process.environment = environment.merging(variables) { _, new in new }
    process.currentDirectoryURL = workingDirectory
    process.standardOutput = Pipe()
    process.standardError = terminal?.child ?? Pipe()
    let stdin = input.map { _ in Pipe() }
    process.standardInput = stdin ?? FileHandle.nullDevice
    try process.run()
    terminal?.started()
    if let stdin, let input {
      // A background thread writes it, so a large input never blocks the test's thread.
      let handle = stdin.fileHandleForWriting
      Thread.detachNewThread {
        try? handle.write(contentsOf: Data(input.utf8))
        try? handle.close()
      }
    }
    return process
  }

  /// Writes `text` as `name` under the working directory.
  func write(_ text: String, to name: String) throws {
    let file = workingDirectory.appendingPathComponent(name)
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: file, atomically: true, encoding: .utf8)
  }

  func cleanUp() { try? FileManager.default.removeItem(at: home) }
}

/// `kernel serve --port 0 …` in its own process; its base URL read from its first line.
///
/// Starting, stopping and killing are awaited: the waiting happens on threads of their own,
/// never on Swift's cooperative pool.
final class Server: Sendable {
  let process: Process
  let baseURL: String
  private let errors: Reader

  init(_ kernel: Kernel, _ options: [String] = []) async throws {
    process = try kernel.start(["serve", "--port", "0"] + options)
    guard let pipe = process.standardOutput as? Pipe else { throw TestFailure("no stdout pipe") }
    errors = Reader(process.standardError)
    let handle = pipe.fileHandleForReading
    let line = await onThreadOfItsOwn {
      var line = Data()
      while !line.contains(UInt8(ascii: "\n")) {
        let chunk = handle.availableData
        if chunk.isEmpty { break }  // the server exited
        line.append(chunk)
      }
      return line
    }
    let text = String(decoding: line, as: UTF8.self)
    guard
      let range = text.range(
        of: #"http://(127\.0\.0\.1|\[::1\]):\d+/api/"#, options: .regularExpression)
    else {
      process.terminate()
      throw TestFailure("kernel serve did not start: \(text) \(errors.text())")
    }
    baseURL = String(text[range])
  }

  /// Stops the server with SIGTERM, waits for it to end and returns its summary line.
  @discardableResult func stop() async -> String {
    terminate()
    return await onThreadOfItsOwn { [process, errors] in
      process.waitUntilExit()
      return errors.text()
    }
  }

  /// Sends SIGTERM and does not wait: for `defer`, where nothing can be awaited.
  func terminate() {
    if process.isRunning { process.terminate() }
  }

  /// SIGKILL: no goodbye.
  func kill() async {
    if process.isRunning { sendSignal(SIGKILL, to: process.processIdentifier) }
    await onThreadOfItsOwn { [process] in process.waitUntilExit() }
  }
}

/// Waits for a process to end, or kills it with SIGKILL when it takes too long.
final class Exit: @unchecked Sendable {
  // `process` is only read (its pid, and waiting for it) after `start`.
  private let process: Process
  private let ended = DispatchSemaphore(value: 0)

  init(_ process: Process) {
    self.process = process
    Thread.detachNewThread { [self] in
      self.process.waitUntilExit()
      ended.signal()
    }
  }

  /// True when the process ended within `limit`; otherwise kills it and returns false. The
  /// waiting happens on a thread of its own, not on the caller's.
  func wait(_ limit: Duration) async -> Bool {
    let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) / 1e18
    return await withCheckedContinuation { continuation in
      Thread.detachNewThread { [self] in
        if ended.wait(timeout: .now() + seconds) == .success {
          continuation.resume(returning: true)
          return
        }
        sendSignal(SIGKILL, to: process.processIdentifier)
        ended.wait()
        continuation.resume(returning: false)
      }
    }
  }
}

private func sendSignal(_ signal: Int32, to pid: Int32) { _ = kill(pid, signal) }

/// Drains a pipe on its own thread so a chatty process never blocks on a full pipe; a test can
/// wait for a line to appear while the process still runs.
final class Reader: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`.
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  init(_ pipe: Any?) {
    guard let handle = (pipe as? Pipe)?.fileHandleForReading else {
      ended = true
      return
    }
    Thread.detachNewThread { [self] in
      while true {
        let chunk = handle.availableData
        condition.lock()
        if chunk.isEmpty { ended = true } else { data.append(chunk) }
        condition.broadcast()
        condition.unlock()
        if chunk.isEmpty { break }
      }
    }
  }

  /// Everything, once the writer has closed the pipe.
  func text() -> String {
    condition.lock()
    defer { condition.unlock() }
    while !ended { condition.wait() }
    return String(decoding: data, as: UTF8.self)
  }

  /// Waits until `fragment` has appeared `count` times: false when the pipe closes first or
  /// `limit` passes. (On a thread of its own, like `Exit.wait`.)
  func wait(for fragment: String, count: Int = 1, limit: Duration) async -> Bool {
    await withCheckedContinuation { continuation in
      Thread.detachNewThread { [self] in
        continuation.resume(returning: waitHere(for: fragment, count: count, limit: limit))
      }
    }
  }

  private func waitHere(for fragment: String, count: Int, limit: Duration) -> Bool {
    let deadline = Date(
      timeIntervalSinceNow: Double(limit.components.seconds) + Double(limit.components.attoseconds)
        / 1e18)
    condition.lock()
    defer { condition.unlock() }
    while String(decoding: data, as: UTF8.self).components(separatedBy: fragment).count - 1 < count
    {
      if ended || !condition.wait(until: deadline) { return false }
    }
    return true
  }
}

/// A pseudo-terminal for a child's stderr, so it behaves as on a user's terminal (progress);
/// everything the child writes there is collected.
final class PseudoTerminal: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`; `child` is only used before `started()`.
  let child: FileHandle
  private let primary: Int32
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  init() throws {
    // Glibc's Swift module leaves out the XSI pseudo-terminal calls: look them up in libc.
    typealias OpenCall = @convention(c) (Int32) -> Int32
    typealias NameCall = @convention(c) (Int32) -> UnsafeMutablePointer<CChar>?
    func call<T>(_ name: String, as type: T.Type) throws -> T {
      guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else {
        throw TestFailure("libc has no \(name)")
      }
      return unsafeBitCast(symbol, to: type)
    }
    primary = try call("posix_openpt", as: OpenCall.self)(O_RDWR | O_NOCTTY)
    guard primary >= 0, try call("grantpt", as: OpenCall.self)(primary) == 0,
      try call("unlockpt", as: OpenCall.self)(primary) == 0,
      let name = try call("ptsname", as: NameCall.self)(primary)
    else { throw TestFailure("no pseudo-terminal: errno \(errno)") }
    let secondary = open(String(cString: name), O_RDWR | O_NOCTTY)
    guard secondary >= 0 else { throw TestFailure("could not open \(String(cString: name))") }
    child = FileHandle(fileDescriptor: secondary, closeOnDealloc: true)
  }

  /// Closes this process's copy of the child's side, so reading ends when the child exits.
  func started() {
    try? child.close()
    Thread.detachNewThread { [self] in
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(primary, &buffer, buffer.count)
        condition.lock()
        if count > 0 { data.append(contentsOf: buffer[..<count]) } else { ended = true }
        condition.broadcast()
        condition.unlock()
        if count <= 0 { break }
      }
      close(primary)
    }
  }

  /// Everything the child wrote, once it has exited.
  func text() -> String {
    condition.lock()
    defer { condition.unlock() }
    while !ended { condition.wait() }
    return String(decoding: data, as: UTF8.self)
  }
}

struct TestFailure: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

extension Kernel {
  /// The cache database's `PRAGMA integrity_check`, by the `sqlite3` command-line tool.
  func integrityCheck() async throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "sqlite3", dataDirectory.appendingPathComponent("cache.sqlite").path,
      "PRAGMA integrity_check;",
    ]
    process.standardOutput = Pipe()
    process.standardError = Pipe()
    let out = Reader(process.standardOutput)
    let err = Reader(process.standardError)
    try process.run()
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
