import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An app's built command (`kernel`, `books`), run as a separate process with a private home,
/// data dir and working directory, and no variable but PATH, HOME, XDG_DATA_HOME and the ones a
/// test sets: what an end-to-end test of an app starts from.
///
/// ```swift
/// let books = try BuiltCommand("books", package: packageRoot)
/// defer { books.cleanUp() }
/// let run = try await books.run(["--profile", "offline", "get", "1"])
/// #expect(run.status == 0, "\(run)")
/// ```
public struct BuiltCommand: Sendable {
  /// The executable's name, and its data dir's under `XDG_DATA_HOME`.
  public let name: String
  public let home: URL
  public let workingDirectory: URL
  /// Where the binary is looked for when it is not beside the test bundle.
  private let package: URL

  /// `package`: the root of the package that builds `name` (its `.build/debug` is searched).
  public init(_ name: String, package: URL) throws {
    self.name = name
    self.package = package
    home = FileManager.default.temporaryDirectory
      .appendingPathComponent("\(name)-e2e-\(UUID().uuidString)")
    workingDirectory = home.appendingPathComponent("work")
    try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: true)
  }

  /// The binary SwiftPM built beside this test bundle, else in the package's `.build/debug`.
  public var binary: URL {
    get throws {
      let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent(name)
      let build = package.appendingPathComponent(".build/debug/\(name)")
      for candidate in [beside, build]
      where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
      }
      throw TestFailure(
        "the \(name) binary was not built (looked in \(beside.path)); run swift build")
    }
  }

  /// How a run ended, and what it printed.
  public struct Run: CustomStringConvertible, Sendable {
    public let status: Int32
    public let stdout: String
    public let stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    /// stdout as one JSON object, if it is one.
    public var json: [String: Any]? {
      (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
  }

  public var environment: [String: String] {
    [
      "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
      "HOME": home.path, "XDG_DATA_HOME": home.appendingPathComponent("data").path,
    ]
  }

  /// The default data dir: `$XDG_DATA_HOME/<name>` of the private home.
  public var dataDirectory: URL { home.appendingPathComponent("data/\(name)") }

  /// Runs `kernel arguments` to its end; kills it and fails when it is still running after
  /// `limit`, so a hang is reported as one instead of stalling the suite.
  ///
  /// Async, and waiting on a thread of its own: a test blocked on a child would hold one of the
  /// few threads of Swift's cooperative pool and starve the async tests running beside it.
  public func run(
    _ arguments: [String], variables: [String: String] = [:], within limit: Duration = .seconds(60),
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) async throws -> Run {
    try await launch(
      arguments, variables: variables, fileSizeLimitKB: fileSizeLimitKB, input: input
    )
    .finish(within: limit)
  }

  /// Runs `script` with bash, `$NAME` (`$KERNEL`, `$BOOKS`) naming the binary: for
  /// redirections a test cannot make with `Process` (`>/dev/full`, `>&-`).
  public func shell(_ script: String, variables: [String: String] = [:]) async throws -> Run {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    process.arguments = ["-c", script]
    process.environment = environment.merging(variables) { _, new in new }
      .merging([name.uppercased(): try binary.path]) { _, new in new }
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

  /// A run still going, its output drained as it comes.
  public struct Running: @unchecked Sendable {
    // `process` is only waited for and read once it has started.
    public let process: Process
    public let stdout: Reader
    public let stderr: Reader

    /// Waits for the end, killing it and failing past `limit`.
    public func finish(within limit: Duration) async throws -> Run {
      let ended = await Exit(process).wait(limit)
      // The pipes close as the process ends; their last bytes are collected off the pool.
      let (out, err) = await onThreadOfItsOwn { [stdout, stderr] in (stdout.text(), stderr.text()) }
      guard ended else {
        throw TestFailure(
          "\(process.executableURL?.lastPathComponent ?? "the command") \(process.arguments?.joined(separator: " ") ?? "") ran past \(limit);"
            + " stderr: \(err)")
      }
      return Run(status: process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts the command with `arguments`; stderr goes to `terminal` when given, else to a pipe.
  public func launch(
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
  public func start(
    _ arguments: [String], variables: [String: String] = [:], terminal: PseudoTerminal? = nil,
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) throws -> Process {
    let process = Process()
    if let limit = fileSizeLimitKB {
      process.executableURL = URL(fileURLWithPath: "/bin/bash")  // ulimit -f in KiB
      process.arguments =
        ["-c", "ulimit -f \(limit) && exec \"$0\" \"$@\"", try binary.path] + arguments
    } else {
      process.executableURL = try binary
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
  public func write(_ text: String, to path: String) throws {
    let file = workingDirectory.appendingPathComponent(path)
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try text.write(to: file, atomically: true, encoding: .utf8)
  }

  public func cleanUp() { try? FileManager.default.removeItem(at: home) }
}

/// `<app> serve --port 0 …` in its own process (the movie API, or `--fixtures DIR`); its base
/// URL read from its first line.
///
/// Starting, stopping and killing are awaited: the waiting happens on threads of their own,
/// never on Swift's cooperative pool.
public final class ServedCommand: @unchecked Sendable {
  // Only read after `init`.
  public let process: Process
  public let baseURL: String
  private let errors: Reader

  public init(_ command: BuiltCommand, _ options: [String] = []) async throws {
    process = try command.start(["serve", "--port", "0"] + options)
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

  /// Sends SIGTERM and does not wait: for `defer`, where nothing can be awaited.
  public func terminate() {
    if process.isRunning { process.terminate() }
  }

  /// SIGKILL: no goodbye.
  public func kill() async {
    if process.isRunning { sendSignal(SIGKILL, to: process.processIdentifier) }
    await onThreadOfItsOwn { [process] in process.waitUntilExit() }
  }
}

/// Waits for a process to end, or kills it with SIGKILL when it takes too long.
public final class Exit: @unchecked Sendable {
  // `process` is only read (its pid, and waiting for it) after `start`.
  private let process: Process
  private let ended = DispatchSemaphore(value: 0)

  public init(_ process: Process) {
    self.process = process
    Thread.detachNewThread { [self] in
      self.process.waitUntilExit()
      ended.signal()
    }
  }

  /// True when the process ended within `limit`; otherwise kills it and returns false. The
  /// waiting happens on a thread of its own, not on the caller's.
  public func wait(_ limit: Duration) async -> Bool {
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
public final class Reader: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`.
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  public init(_ pipe: Any?) {
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
  public func text() -> String {
    condition.lock()
    defer { condition.unlock() }
    while !ended { condition.wait() }
    return String(decoding: data, as: UTF8.self)
  }

  /// Waits until `fragment` has appeared `count` times: false when the pipe closes first or
  /// `limit` passes. (On a thread of its own, like `Exit.wait`.)
  public func wait(for fragment: String, count: Int = 1, limit: Duration) async -> Bool {
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
public final class PseudoTerminal: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`; `child` is only used before `started()`.
  public let child: FileHandle
  private let primary: Int32
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  public init() throws {
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
  public func started() {
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
  public func text() -> String {
    condition.lock()
    defer { condition.unlock() }
    while !ended { condition.wait() }
    return String(decoding: data, as: UTF8.self)
  }
}

/// A test's own failure, as one sentence.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}
