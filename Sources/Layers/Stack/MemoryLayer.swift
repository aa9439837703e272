import Domain
import Foundation
import Synchronization

/// Keeps the last answers in memory: at most `capacity` of them (least recently used go
/// first), each for at most `maxAge`. A kept answer comes back from the cache, as old as it was
/// when kept plus the time since.
package final class MemoryLayer: ServiceLayer {
  /// How many answers it keeps.
  public let capacity: Int
  /// How long an answer is kept.
  public let maxAge: Duration
  private let clock: WallClock
  private let entries = Mutex<(values: [String: Entry], tick: Int)>(([:], 0))

  private struct Entry {
    let answer: any Sendable
    let age: TimeInterval
    let keptAt: Date
    var used: Int
  }

  /// At most `capacity` answers (at least 1), each for `maxAge`, aged on `clock`.
  public init(capacity: Int = 64, maxAge: Duration = .seconds(60), clock: WallClock = .system) {
    self.capacity = max(1, capacity)
    self.maxAge = maxAge
    self.clock = clock
  }

  /// `call` from memory when kept and young enough, else from below (and kept).
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    // A call with no codec is never answered by a layer: its answer is not to be kept.
    guard call.codec != nil else { return try await next() }
    let at = clock.now()
    let hit = entries.withLock { state -> Answer<Value>? in
      guard var entry = state.values[call.key],
        at.timeIntervalSince(entry.keptAt) <= maxAge.seconds,
        var answer = entry.answer as? Answer<Value>
      else { return nil }
      state.tick += 1
      entry.used = state.tick
      state.values[call.key] = entry
      answer.origin = .cache
      answer.age = entry.age + max(0, at.timeIntervalSince(entry.keptAt))
      return answer
    }
    if let hit { return hit }
    let answer = try await next()
    entries.withLock { state in
      state.tick += 1
      state.values[call.key] = Entry(
        answer: answer, age: answer.age, keptAt: clock.now(), used: state.tick)
      while state.values.count > capacity,
        let oldest = state.values.min(by: { $0.value.used < $1.value.used })?.key
      {
        state.values.removeValue(forKey: oldest)
      }
    }
    return answer
  }

  /// How many answers are kept.
  public var count: Int { entries.withLock { $0.values.count } }
}
