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

private let allowed: Set<Int32> = [0, 64, 65, 69, 77, 78]

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

private func run(_ arguments: [String]) -> (Int32, Bool, String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: binary)
  process.arguments = arguments
  process.environment = [
    "PATH": "/usr/bin:/bin", "HOME": sandbox.path,
    "XDG_DATA_HOME": sandbox.appendingPathComponent("data").path,
    "KERNEL_TIMEOUTS_CALL_SECONDS": "3",
  ]
  process.currentDirectoryURL = sandbox.appendingPathComponent("work")
  process.standardInput = FileHandle.nullDevice
  process.standardOutput = FileHandle.nullDevice
  let errors = Pipe()
  process.standardError = errors
  do { try process.run() } catch { fatalError("could not start \(binary): \(error)") }
  let deadline = Date(timeIntervalSinceNow: 8)
  let collected = Collected()
  let drained = DispatchSemaphore(value: 0)
  let handle = errors.fileHandleForReading
  Thread.detachNewThread {
    collected.set(handle.readDataToEndOfFile())
    drained.signal()
  }
  while process.isRunning {
    if Date() > deadline {
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      fatalError("kernel \(arguments) ran past 8 s")
    }
    usleep(1000)
  }
  drained.wait()
  return (
    process.terminationStatus, process.terminationReason == .uncaughtSignal,
    String(decoding: collected.get(), as: UTF8.self)
  )
}

/// What a child wrote to stderr; `lock` guards `data`.
private final class Collected: @unchecked Sendable {
  private let lock = NSLock()
  private var data = Data()
  func set(_ data: Data) { lock.withLock { self.data = data } }
  func get() -> Data { lock.withLock { data } }
}

/// The process entry (SwiftPM's name for this target's `main`).
@_cdecl("fuzz_cli_main")
public func fuzzMain(
  _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
) -> Int32 {
  runFuzzer(argc, argv, fuzzCommandLine)
}
