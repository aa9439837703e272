import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Drains a pipe on its own thread so a chatty process never blocks on a full pipe; a test can
/// wait for a line to appear while the process still runs.
public final class Reader: @unchecked Sendable {
  // `data` and `ended` are guarded by `condition`.
  private let condition = NSCondition()
  private var data = Data()
  private var ended = false

  /// Starts draining `handle` on a thread of its own; nothing for nil.
  public init(_ handle: FileHandle?) {
    guard let handle else {
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
    let deadline = Date(timeIntervalSinceNow: limit.seconds)
    condition.lock()
    defer { condition.unlock() }
    while String(decoding: data, as: UTF8.self).components(separatedBy: fragment).count - 1 < count
    {
      if ended || !condition.wait(until: deadline) { return false }
    }
    return true
  }
}
