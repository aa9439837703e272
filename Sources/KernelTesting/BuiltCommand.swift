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
  /// The private home (`HOME`), removed by `cleanUp()`.
  public let home: URL
  /// The folder each run starts in, inside `home`.
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

  /// The folder named by `KERNEL_TESTING_BINARIES` when it is set (`.build/release`, to run the
  /// end-to-end tests against the release build users install); else the binary SwiftPM built
  /// beside this test bundle, else in the package's `.build/debug`.
  public var binary: URL {
    get throws {
      if let folder = ProcessInfo.processInfo.environment[Self.binariesVariable], !folder.isEmpty {
        let chosen = URL(fileURLWithPath: folder, relativeTo: package).appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: chosen.path) else {
          throw TestFailure(
            "\(Self.binariesVariable) names \(folder), which holds no \(name) binary; build it first"
          )
        }
        return chosen
      }
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

  /// The variable naming a folder of built binaries to test instead of the debug build.
  public static let binariesVariable = "KERNEL_TESTING_BINARIES"

  /// How a run ended, and what it printed.
  public struct Run: CustomStringConvertible, Sendable {
    /// The exit code.
    public let status: Int32
    /// Everything it wrote to standard output.
    public let stdout: String
    /// Everything it wrote to standard error.
    public let stderr: String
    public var description: String { "exit \(status)\nstdout: \(stdout)\nstderr: \(stderr)" }
    /// stdout as one JSON object, if it is one.
    public var json: [String: Any]? {
      (try? JSONSerialization.jsonObject(with: Data(stdout.utf8))) as? [String: Any]
    }
  }

  /// The variables every run gets: PATH, HOME and XDG_DATA_HOME.
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
  /// few threads of Swift's cooperative pool and starve the async tests running beside it. At
  /// most twice the cores and two more such runs go at once in a test process (the others wait
  /// to start, and their `limit` starts when they do); `launch` starts a child at once.
  public func run(
    _ arguments: [String], variables: [String: String] = [:], within limit: Duration = .seconds(60),
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) async throws -> Run {
    try await RunSlots.shared.holding {
      try await launch(
        arguments, variables: variables, fileSizeLimitKB: fileSizeLimitKB, input: input
      )
      .finish(within: limit)
    }
  }

  /// Runs `script` with bash, `$NAME` (`$KERNEL`, `$BOOKS`) naming the binary: for
  /// redirections a test cannot make otherwise (`>/dev/full`, `>&-`).
  public func shell(_ script: String, variables: [String: String] = [:]) async throws -> Run {
    try await RunSlots.shared.holding {
      let process = try await ChildProcess(
        URL(fileURLWithPath: "/bin/bash"), arguments: ["-c", script],
        environment: environment.merging(variables) { _, new in new }
          .merging([name.uppercased(): try binary.path]) { _, new in new },
        directory: workingDirectory)
      return try await Running(process).finish(within: .seconds(60))
    }
  }

  /// A run still going, its output drained as it comes.
  public struct Running: Sendable {
    /// The running process.
    public let process: ChildProcess
    /// Its standard output, drained as it comes.
    public let stdout: Reader
    /// Its standard error, drained as it comes.
    public let stderr: Reader

    init(_ process: ChildProcess) {
      self.process = process
      stdout = Reader(process.standardOutput)
      stderr = Reader(process.standardError)
    }

    /// Waits for the end, killing it and failing past `limit`.
    public func finish(within limit: Duration) async throws -> Run {
      let ended = await process.exit(within: limit)
      // The pipes close as the process ends; their last bytes are collected off the pool.
      let (out, err) = await onThreadOfItsOwn { [stdout, stderr] in (stdout.text(), stderr.text()) }
      guard ended else {
        throw TestFailure(
          "\(process.executable.lastPathComponent) \(process.arguments.joined(separator: " ")) ran"
            + " past \(limit); stderr: \(err)")
      }
      return Run(status: process.terminationStatus, stdout: out, stderr: err)
    }
  }

  /// Starts the command with `arguments`; stderr goes to `terminal` when given, else to a pipe.
  public func launch(
    _ arguments: [String], variables: [String: String] = [:], terminal: PseudoTerminal? = nil,
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) async throws -> Running {
    Running(
      try await start(
        arguments, variables: variables, terminal: terminal, fileSizeLimitKB: fileSizeLimitKB,
        input: input))
  }

  /// With `fileSizeLimitKB`, bash's `ulimit -f` runs it: writes past that size fail, as
  /// on a full disk.
  public func start(
    _ arguments: [String], variables: [String: String] = [:], terminal: PseudoTerminal? = nil,
    fileSizeLimitKB: Int? = nil, input: String? = nil
  ) async throws -> ChildProcess {
    let (executable, line) =
      if let limit = fileSizeLimitKB {
        (  // ulimit -f in KiB
          URL(fileURLWithPath: "/bin/bash"),
          ["-c", "ulimit -f \(limit) && exec \"$0\" \"$@\"", try binary.path] + arguments
        )
      } else {
        (try binary, arguments)
      }
    let stdin: ChildProcess.Stream =
      if let terminal, terminal.isInput { .handle(terminal.child) } else if input != nil {
        .pipe
      } else { .null }
    let process = try await ChildProcess(
      executable, arguments: line, environment: environment.merging(variables) { _, new in new },
      directory: workingDirectory, stdin: stdin,
      stderr: terminal.map { .handle($0.child) } ?? .pipe)
    terminal?.started()
    if let handle = process.standardInput, let input {
      // A background thread writes it, so a large input never blocks the test's thread. A
      // child that ends before reading it all makes the write fail: SIGPIPE, blocked on this
      // thread alone (and dropped with it), would otherwise end the whole test process.
      Thread.detachNewThread {
        var broken = sigset_t()
        sigemptyset(&broken)
        sigaddset(&broken, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &broken, nil)
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

  /// Removes the private home and everything in it.
  public func cleanUp() { try? FileManager.default.removeItem(at: home) }
}
