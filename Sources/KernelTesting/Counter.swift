import Foundation

/// Counts events from any thread or task, and lets a test wait, without polling, until a count
/// is reached: "the request reached the server", "ten calls are inside the layer".
///
/// Behind an `NSLock` (a pthread mutex), not `Synchronization.Mutex`: the container's tests run
/// under ThreadSanitizer, which cannot see the futex a contended `Mutex` waits in on Linux and
/// reports every contended count as a race (a CI run did), as `Injection`'s `Locked` notes.
public final class Counter: Sendable {
  private struct State {
    var value = 0
    var waiters: [(target: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = PthreadGuarded(State())

  /// A count of 0.
  public init() {}

  /// The count now.
  public var value: Int { state.withLock { $0.value } }

  /// Adds one, waking whoever waits for the new count; returns the new count.
  @discardableResult
  public func increment() -> Int {
    let (value, ready) = state.withLock { state -> (Int, [CheckedContinuation<Void, Never>]) in
      state.value += 1
      let value = state.value
      let ready = state.waiters.filter { $0.target <= value }.map(\.continuation)
      state.waiters.removeAll { $0.target <= value }
      return (value, ready)
    }
    for continuation in ready { continuation.resume() }
    return value
  }

  /// Returns once the count is at least `target`.
  public func reach(_ target: Int) async {
    await withCheckedContinuation { continuation in
      let done = state.withLock { state -> Bool in
        if state.value >= target { return true }
        state.waiters.append((target, continuation))
        return false
      }
      if done { continuation.resume() }
    }
  }
}
