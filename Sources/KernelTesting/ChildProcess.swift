import Foundation
import Subprocess

#if canImport(System)
  import System
#else
  import SystemPackage
#endif

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process started with swift-subprocess: what tests start instead of Foundation's
/// `Process`, with a handle a test keeps (its pid, its pipes, its end) while it runs.
///
/// On Linux, swift-corelibs-foundation's `Process.run()` (Swift 6.3) finds the descriptors to
/// close in the child by copying each `/proc/self/fd` entry's whole 256-byte name; once glibc's
/// 32 KiB directory buffer is full (about 1,300 open descriptors, which a test process running
/// servers and clients beside each other reaches) it reads past the buffer and crashes the whole
/// test run (swiftlang/swift-corelibs-foundation#5472). swift-subprocess marks every other
/// descriptor close-on-exec in the child (`close_range`), so the child's descriptors are 0, 1
/// and 2 as asked and nothing else (`ChildProcessTests`), and it starts with the default signal
/// dispositions and an empty signal mask, whatever the test process blocks.
public final class ChildProcess: @unchecked Sendable {
  // `ending.value` is guarded by its condition; everything else is set in `init` and only read.
  /// The child's pid.
  public let processIdentifier: Int32
  /// What was started.
  public let executable: URL
  /// Its arguments, without the executable's path.
  public let arguments: [String]
  /// The write end of the child's stdin when it was `.pipe`.
  public let standardInput: FileHandle?
  /// The read end of the child's stdout when it was `.pipe`.
  public let standardOutput: FileHandle?
  /// The read end of the child's stderr when it was `.pipe`.
  public let standardError: FileHandle?
  private let ending: Ending

  /// How the child ended, once it has: set by the task that runs it, waited for by any thread.
  private final class Ending: @unchecked Sendable {
    // `value` is read and written only with `condition` locked.
    let condition = NSCondition()
    var value: (status: Int32, reason: Process.TerminationReason)?

    func set(_ ended: (Int32, Process.TerminationReason)) {
      condition.lock()
      value = ended
      condition.broadcast()
      condition.unlock()
    }
  }

  /// Where one of the child's standard descriptors goes.
  public enum Stream {
    /// `/dev/null`.
    case null
    /// A pipe whose other end this process holds (`standardInput`/`Output`/`Error`).
    case pipe
    /// This descriptor, shared with the child (a pseudo-terminal's side).
    case handle(FileHandle)
  }

  /// Starts `executable` with `arguments`; `environment` nil passes this process's on. Throws
  /// `could not start <path>: <reason>` when it cannot start (no such file, not executable).
  public init(
    _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
    directory: URL? = nil, stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe
  ) async throws {
    self.executable = executable
    self.arguments = arguments
    // The ends this process keeps, and the ones the child gets (those it owns are closed once
    // the child has them).
    var kept: [Int32?] = [nil, nil, nil]
    var given: [(descriptor: Int32, owned: Bool)] = []
    do {
      for (target, stream) in [stdin, stdout, stderr].enumerated() {
        switch stream {
        case .null:
          let descriptor = open("/dev/null", (target == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC)
          guard descriptor >= 0 else { throw Self.failure("open /dev/null", errno) }
          given.append((descriptor, true))
        case .pipe:
          var ends: [Int32] = [0, 0]
          guard pipe(&ends) == 0 else { throw Self.failure("pipe", errno) }
          // Close-on-exec, so a child started some other way does not inherit them either.
          for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
          let (childs, ours) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
          given.append((childs, true))
          kept[target] = ours
        case .handle(let handle):
          given.append((handle.fileDescriptor, false))
        }
      }
    } catch {
      for (descriptor, owned) in given where owned { close(descriptor) }
      for case let descriptor? in kept { close(descriptor) }
      throw error
    }
    let ending = Ending()
    self.ending = ending
    let environment: Subprocess.Environment =
      environment.map { variables in
        .custom(
          Dictionary(
            uniqueKeysWithValues: variables.map { (Environment.Key(stringLiteral: $0), $1) }))
      } ?? .inherit
    // The pid, once the child runs; or why it could not start.
    let (pid, started) = AsyncThrowingStream.makeStream(of: Int32.self)
    let ends = given
    // The task runs the child to its end; it hands the pid over as soon as it has one.
    Task.detached {
      func descriptor(_ index: Int) -> FileDescriptor {
        FileDescriptor(rawValue: ends[index].descriptor)
      }
      do {
        let result = try await Subprocess.run(
          .path(FilePath(executable.path)), arguments: Arguments(arguments),
          environment: environment, workingDirectory: directory.map { FilePath($0.path) },
          input: .fileDescriptor(descriptor(0), closeAfterSpawningProcess: ends[0].owned),
          output: .fileDescriptor(descriptor(1), closeAfterSpawningProcess: ends[1].owned),
          error: .fileDescriptor(descriptor(2), closeAfterSpawningProcess: ends[2].owned)
        ) { execution in
          started.yield(execution.processIdentifier.value)
          started.finish()
        }
        switch result.terminationStatus {
        case .exited(let code): ending.set((code, .exit))
        case .signaled(let signal): ending.set((signal, .uncaughtSignal))
        }
      } catch {
        started.finish(throwing: TestFailure("could not start \(executable.path): \(error)"))
        ending.set((-1, .exit))
      }
    }
    do {
      guard let first = try await pid.first(where: { _ in true }) else {
        throw TestFailure("could not start \(executable.path)")
      }
      processIdentifier = first
    } catch {
      for case let descriptor? in kept { close(descriptor) }
      throw error
    }
    func handle(_ descriptor: Int32?) -> FileHandle? {
      descriptor.map { FileHandle(fileDescriptor: $0, closeOnDealloc: true) }
    }
    standardInput = handle(kept[0])
    standardOutput = handle(kept[1])
    standardError = handle(kept[2])
  }

  /// Whether it has not ended yet.
  public var isRunning: Bool {
    ending.condition.lock()
    defer { ending.condition.unlock() }
    return ending.value == nil
  }

  /// Blocks until it has ended: call it off Swift's cooperative pool (`exited()` does).
  public func waitUntilExit() {
    ending.condition.lock()
    defer { ending.condition.unlock() }
    while ending.value == nil { ending.condition.wait() }
  }

  /// Waits for the end on a thread of its own.
  public func exited() async { await onThreadOfItsOwn { [self] in waitUntilExit() } }

  /// True when it ended within `limit`; otherwise kills it with SIGKILL, waits for that end and
  /// returns false. The waiting happens on a thread of its own, not on the caller's.
  public func exit(within limit: Duration) async -> Bool {
    await onThreadOfItsOwn { [self] in
      if waitUntilExit(before: limit) { return true }
      send(SIGKILL)
      waitUntilExit()
      return false
    }
  }

  /// Waits up to `limit` for the end: false when it is still running then. Blocks; off the pool.
  public func waitUntilExit(before limit: Duration) -> Bool {
    let deadline = Date(timeIntervalSinceNow: limit.seconds)
    ending.condition.lock()
    defer { ending.condition.unlock() }
    while ending.value == nil { if !ending.condition.wait(until: deadline) { break } }
    return ending.value != nil
  }

  /// The exit code, or the signal that ended it (see `terminationReason`); waits for the end.
  public var terminationStatus: Int32 {
    waitUntilExit()
    ending.condition.lock()
    defer { ending.condition.unlock() }
    return ending.value?.status ?? 0
  }

  /// `.exit` or `.uncaughtSignal`; waits for the end.
  public var terminationReason: Process.TerminationReason {
    waitUntilExit()
    ending.condition.lock()
    defer { ending.condition.unlock() }
    return ending.value?.reason ?? .exit
  }

  /// Sends `signal` while it runs; after its end nothing, so no reused pid is ever signalled.
  public func send(_ signal: Int32) {
    ending.condition.lock()
    defer { ending.condition.unlock() }
    if ending.value == nil { _ = kill(processIdentifier, signal) }
  }

  /// SIGTERM.
  public func terminate() { send(SIGTERM) }

  private static func failure(_ call: String, _ code: Int32) -> TestFailure {
    TestFailure("\(call) failed: \(String(cString: strerror(code)))")
  }
}
