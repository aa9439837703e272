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

/// Values recorded from any thread, e.g. by a server route or a fake transport, in order.
public final class Recorder<Value: Sendable>: Sendable {
  private let values = PthreadGuarded<[Value]>([])
  private let counter = Counter()

  public init() {}

  public func append(_ value: Value) {
    values.withLock { $0.append(value) }
    counter.increment()
  }

  /// Everything recorded so far.
  public var all: [Value] { values.withLock { $0 } }

  /// Returns once at least `count` values are recorded.
  public func reach(_ count: Int) async { await counter.reach(count) }
}

/// A value behind an `NSLock`, for the test helpers here that ThreadSanitizer watches.
final class PthreadGuarded<Value>: @unchecked Sendable {
  // `value` is only read or written inside `withLock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
