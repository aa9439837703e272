import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A child process started with `posix_spawn`: what tests start instead of Foundation's
/// `Process`.
///
/// On Linux, swift-corelibs-foundation's `Process.run()` (Swift 6.3) finds the descriptors to
/// close in the child by copying each `/proc/self/fd` entry's whole 256-byte name; once glibc's
/// 32 KiB directory buffer is full (about 1,300 open descriptors, which a test process running
/// servers and clients beside each other reaches) it reads past the buffer and crashes the whole
/// test run (swiftlang/swift-corelibs-foundation#5472). Here the C library closes them
/// (`posix_spawn_file_actions_addclosefrom_np`; `POSIX_SPAWN_CLOEXEC_DEFAULT` on Darwin).
///
/// The child starts with the default signal dispositions and an empty signal mask, whatever the
/// test process blocks; its descriptors are 0, 1 and 2 as asked and nothing else.
public final class ChildProcess: @unchecked Sendable {
  // `ending` is guarded by `condition`; everything else is set in `init` and only read.
  public let processIdentifier: Int32
  public let executable: URL
  public let arguments: [String]
  /// The write end of the child's stdin when it was `.pipe`.
  public let standardInput: FileHandle?
  /// The read ends of the child's stdout and stderr when they were `.pipe`.
  public let standardOutput: FileHandle?
  public let standardError: FileHandle?
  private let condition = NSCondition()
  private var ending: (status: Int32, reason: Process.TerminationReason)?

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
  /// the system's reason when it cannot start (no such file, not executable).
  public init(
    _ executable: URL, arguments: [String] = [], environment: [String: String]? = nil,
    directory: URL? = nil, stdin: Stream = .null, stdout: Stream = .pipe, stderr: Stream = .pipe
  ) throws {
    self.executable = executable
    self.arguments = arguments
    #if canImport(Glibc)
      var actions = posix_spawn_file_actions_t()
      var attributes = posix_spawnattr_t()
    #else
      var actions: posix_spawn_file_actions_t = nil
      var attributes: posix_spawnattr_t = nil
    #endif
    posix_spawn_file_actions_init(&actions)
    posix_spawnattr_init(&attributes)
    defer {
      posix_spawn_file_actions_destroy(&actions)
      posix_spawnattr_destroy(&attributes)
    }
    // The ends this process keeps, and the ones the child gets and this process closes.
    var kept: [Int32?] = [nil, nil, nil]
    var given: [Int32] = []
    defer { for descriptor in given { close(descriptor) } }
    do {
      for (target, stream) in [stdin, stdout, stderr].enumerated() {
        let target = Int32(target)
        switch stream {
        case .null:
          let flags = target == 0 ? O_RDONLY : O_WRONLY
          try Self.check(
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", flags, 0), "addopen")
        case .pipe:
          var ends: [Int32] = [0, 0]
          guard pipe(&ends) == 0 else { throw Self.failure("pipe", errno) }
          // Close-on-exec, so a child started some other way does not inherit them either.
          for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
          let (childs, ours) = target == 0 ? (ends[0], ends[1]) : (ends[1], ends[0])
          given.append(childs)
          kept[Int(target)] = ours
          try Self.check(posix_spawn_file_actions_adddup2(&actions, childs, target), "adddup2")
        case .handle(let handle):
          try Self.check(
            posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, target), "adddup2")
        }
      }
      if let directory {
        try Self.check(
          Self.library.changeDirectory(&actions, directory.path), "addchdir_np")
      }
      try Self.library.closeOthers(&actions)
      var signals = sigset_t()
      sigemptyset(&signals)
      try Self.check(posix_spawnattr_setsigmask(&attributes, &signals), "setsigmask")
      sigfillset(&signals)
      try Self.check(posix_spawnattr_setsigdefault(&attributes, &signals), "setsigdefault")
      try Self.check(
        posix_spawnattr_setflags(
          &attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) | Self.library.flags),
        "setflags")

      let variables = (environment ?? ProcessInfo.processInfo.environment).map { "\($0)=\($1)" }
      var pid: pid_t = 0
      let spawned = try Self.withCStrings([executable.path] + arguments) { argv in
        try Self.withCStrings(variables) { envp in
          posix_spawn(&pid, executable.path, &actions, &attributes, argv, envp)
        }
      }
      guard spawned == 0 else {
        throw TestFailure(
          "could not start \(executable.path): \(String(cString: strerror(spawned)))")
      }
      processIdentifier = pid
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
    // One reaper per child, so the status is collected once, however many wait for it.
    Thread.detachNewThread { [self] in
      var status: Int32 = 0
      while waitpid(processIdentifier, &status, 0) == -1 && errno == EINTR {}
      // WIFSIGNALED / WTERMSIG / WEXITSTATUS, which Swift does not import as macros.
      let signal = status & 0x7f
      let ended: (Int32, Process.TerminationReason) =
        signal == 0 ? ((status >> 8) & 0xff, .exit) : (signal, .uncaughtSignal)
      condition.lock()
      ending = ended
      condition.broadcast()
      condition.unlock()
    }
  }

  /// Whether it has not ended yet.
  public var isRunning: Bool {
    condition.lock()
    defer { condition.unlock() }
    return ending == nil
  }

  /// Blocks until it has ended: call it off Swift's cooperative pool (`exited()` does).
  public func waitUntilExit() {
    condition.lock()
    defer { condition.unlock() }
    while ending == nil { condition.wait() }
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
    condition.lock()
    defer { condition.unlock() }
    while ending == nil { if !condition.wait(until: deadline) { break } }
    return ending != nil
  }

  /// The exit code, or the signal that ended it (see `terminationReason`); waits for the end.
  public var terminationStatus: Int32 {
    waitUntilExit()
    condition.lock()
    defer { condition.unlock() }
    return ending?.status ?? 0
  }

  /// `.exit` or `.uncaughtSignal`; waits for the end.
  public var terminationReason: Process.TerminationReason {
    waitUntilExit()
    condition.lock()
    defer { condition.unlock() }
    return ending?.reason ?? .exit
  }

  /// Sends `signal` while it runs; after its end nothing, so no reused pid is ever signalled.
  public func send(_ signal: Int32) {
    condition.lock()
    defer { condition.unlock() }
    if ending == nil { _ = kill(processIdentifier, signal) }
  }

  /// SIGTERM.
  public func terminate() { send(SIGTERM) }

  private static func check(_ result: Int32, _ call: String) throws {
    if result != 0 { throw failure("posix_spawn_file_actions_\(call)", result) }
  }

  private static func failure(_ call: String, _ code: Int32) -> TestFailure {
    TestFailure("\(call) failed: \(String(cString: strerror(code)))")
  }

  /// `strings` as a NULL-terminated array of C strings, for the length of `body`.
  private static func withCStrings<R>(
    _ strings: [String], _ body: ([UnsafeMutablePointer<CChar>?]) throws -> R
  ) throws -> R {
    // Safe: each copy is made by strdup, lives until the defer frees it, and body's pointers do
    // not outlive the call.
    let copies = strings.map { strdup($0) }
    defer { for copy in copies { free(copy) } }
    return try body(copies + [nil])
  }

  /// The calls the platform's C library has under other names or not in Swift's module.
  private struct Library: Sendable {
    let changeDirectory:
      @Sendable (UnsafeMutablePointer<posix_spawn_file_actions_t>, String) -> Int32
    let closeOthers: @Sendable (UnsafeMutablePointer<posix_spawn_file_actions_t>) throws -> Void
    let flags: Int16
  }

  private static let library: Library = {
    #if os(Linux)
      // Glibc's Swift module leaves out the `_np` calls (glibc 2.29 and 2.34): look them up.
      typealias Chdir =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
        -> Int32
      typealias CloseFrom =
        @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
      func symbol(_ name: String) -> UnsafeMutableRawPointer? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name)
      }
      // Safe: each symbol, when found, is the C function with the signature cast to.
      let chdir = symbol("posix_spawn_file_actions_addchdir_np")
        .map { unsafeBitCast($0, to: Chdir.self) }
      let closeFrom = symbol("posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }
      return Library(
        changeDirectory: { actions, path in chdir.map { $0(actions, path) } ?? ENOSYS },
        closeOthers: { actions in
          guard let closeFrom else {
            throw TestFailure(
              "this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later)"
            )
          }
          try check(closeFrom(actions, 3), "addclosefrom_np")
        },
        flags: 0)
    #else
      return Library(
        changeDirectory: { actions, path in posix_spawn_file_actions_addchdir_np(actions, path) },
        closeOthers: { _ in }, flags: Int16(POSIX_SPAWN_CLOEXEC_DEFAULT))
    #endif
  }()
}
