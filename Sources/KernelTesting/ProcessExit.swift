import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An app's built command (`kernel`, `books`), run as a separate process with a private home,

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
    let seconds = limit.seconds
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

func sendSignal(_ signal: Int32, to pid: Int32) { _ = kill(pid, signal) }
