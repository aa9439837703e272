import Domain
import Foundation
import Synchronization

/// Keeps the last results in memory: at most `capacity` of them (least recently used go
/// first), each for at most `maxAge`.
public final class MemoryLayer: ServiceLayer {
  public let capacity: Int
  public let maxAge: Duration
  private let now: @Sendable () -> Date
  private let entries = Mutex<(values: [String: Entry], tick: Int)>(([:], 0))

  private struct Entry {
    let value: any Sendable
    let storedAt: Date
    var used: Int
  }

  public init(
    capacity: Int = 64, maxAge: Duration = .seconds(60),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.capacity = max(1, capacity)
    self.maxAge = maxAge
    self.now = now
  }

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let at = now()
    let hit = entries.withLock { state -> (Value, Date)? in
      guard var entry = state.values[operation.key],
        at.timeIntervalSince(entry.storedAt) <= maxAge.seconds,
        let value = entry.value as? Value
      else { return nil }
      state.tick += 1
      entry.used = state.tick
      state.values[operation.key] = entry
      return (value, entry.storedAt)
    }
    if let (value, storedAt) = hit {
      Provenance.record(Provenance(origin: .cache, age: at.timeIntervalSince(storedAt)))
      return value
    }
    let value = try await next()
    entries.withLock { state in
      state.tick += 1
      state.values[operation.key] = Entry(value: value, storedAt: now(), used: state.tick)
      while state.values.count > capacity,
        let oldest = state.values.min(by: { $0.value.used < $1.value.used })?.key
      {
        state.values.removeValue(forKey: oldest)
      }
    }
    return value
  }

  /// How many results are kept.
  public var count: Int { entries.withLock { $0.values.count } }
}
