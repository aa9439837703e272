import Foundation
import FuzzDriver

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// libFuzzer's entry: any argument vector (the input split at newlines, at most 32 words) given
/// to the built `kernel` (`$KERNEL_BIN`) must end with one of the contract's exit codes — 0,
/// 64, 65, 69, 77, 78 — never a signal, and within 8 s. `kernel` is an executable, so it runs
/// as a child: a private home, data dir and working directory, stdin empty, every call bounded
/// to 3 s. Words that could reach outside the private folders (absolute or `..` paths) and
/// `serve` (which runs until stopped) are left out.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandLine(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
  let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  let words = text.split(separator: "\n", omittingEmptySubsequences: false).prefix(32).map(
    String.init)
  guard words.allSatisfy(isContained), !words.contains("serve") else { return -1 }
  let (status, signalled, stderr) = run(words)
  if signalled || !allowed.contains(status) {
    fatalError(
      "kernel \(words) ended with \(signalled ? "signal" : "exit") \(status): \(stderr.prefix(2000))"
    )
  }
  return 0
}

private let allowed: Set<Int32> = [0, 64, 65, 66, 69, 77, 78]

/// Whether `word` stays inside the private folders: no absolute, home or parent paths, no NUL.
private func isContained(_ word: String) -> Bool {
  !word.contains("\0") && !word.contains("..") && !word.hasPrefix("/") && !word.hasPrefix("~")
    && !word.contains("=/") && !word.contains("=~")
}

/// The private folder every run shares: home, data dir, working directory.
private let sandbox: URL = {
  let folder = FileManager.default.temporaryDirectory
    .appendingPathComponent("kernel-fuzz-cli-\(getpid())")
  try? FileManager.default.createDirectory(
    at: folder.appendingPathComponent("work"), withIntermediateDirectories: true)
  return folder
}()

private let binary: String = {
  guard let path = ProcessInfo.processInfo.environment["KERNEL_BIN"], !path.isEmpty else {
    FileHandle.standardError.write(Data("fuzz-cli: set KERNEL_BIN to the built kernel\n".utf8))
    exit(64)
  }
  return path
}()

/// Runs `kernel` with `arguments` and returns its exit status, whether a signal ended it, and
/// what it wrote to stderr. Spawned with posix_spawn, not Foundation's `Process`: under
/// AddressSanitizer, `Process.run` reads past the end of a buffer while it lists
/// /proc/self/fd (a CI run caught it), which would pass for a finding of ours.
private func run(_ arguments: [String]) -> (Int32, Bool, String) {
  let environment = [
    "PATH=/usr/bin:/bin", "HOME=\(sandbox.path)",
    "XDG_DATA_HOME=\(sandbox.appendingPathComponent("data").path)",
    "KERNEL_TIMEOUTS_CALL_SECONDS=3",
  ]
  var ends: [Int32] = [-1, -1]
  guard pipe(&ends) == 0 else { fatalError("fuzz-cli: no pipe: errno \(errno)") }
  var actions = posix_spawn_file_actions_t()
  posix_spawn_file_actions_init(&actions)
  defer { posix_spawn_file_actions_destroy(&actions) }
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
  posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
  posix_spawn_file_actions_addclose(&actions, ends[0])
  posix_spawn_file_actions_addclose(&actions, ends[1])
  // `env -C` starts the kernel in the private working directory (and execs it, so the status
  // is the kernel's own).
  let command = ["/usr/bin/env", "-C", sandbox.appendingPathComponent("work").path, binary]
  let argv = (command + arguments).map { strdup($0) } + [nil]
  let envp = environment.map { strdup($0) } + [nil]
  defer { for string in argv + envp { free(string) } }
  var child: pid_t = 0
  let spawned = posix_spawn(&child, command[0], &actions, nil, argv, envp)
  close(ends[1])
  guard spawned == 0 else { fatalError("could not start \(binary): errno \(spawned)") }
  // Reads stderr to its end, within 8 s; past them the child is killed and that is a finding.
  let deadline = DispatchTime.now().uptimeNanoseconds + 8_000_000_000
  var collected = [UInt8]()
  var buffer = [UInt8](repeating: 0, count: 4096)
  while true {
    var ready = pollfd(fd: ends[0], events: Int16(POLLIN), revents: 0)
    if poll(&ready, 1, 100) > 0 {
      let count = read(ends[0], &buffer, buffer.count)
      if count == 0 || (count < 0 && errno != EINTR) { break }
      if count > 0 { collected += buffer[0..<count] }
    }
    if DispatchTime.now().uptimeNanoseconds > deadline {
      kill(child, SIGKILL)
      var ignored: Int32 = 0
      waitpid(child, &ignored, 0)
      fatalError("kernel \(arguments) ran past 8 s")
    }
  }
  close(ends[0])
  var status: Int32 = 0
  while waitpid(child, &status, 0) < 0 && errno == EINTR {}
  // The wait status as <sys/wait.h> lays it out: a signal number in the low 7 bits, else the
  // exit code in the next 8.
  let signal = status & 0x7f
  let signalled = signal != 0 && signal != 0x7f
  return (
    signalled ? signal : (status >> 8) & 0xff, signalled, String(decoding: collected, as: UTF8.self)
  )
}

/// The process entry (SwiftPM's name for this target's `main`).
@_cdecl("fuzz_cli_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzCommandLine)
}
