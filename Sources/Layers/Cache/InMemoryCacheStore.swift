import Domain
import Foundation
import Synchronization

/// A cache store in memory, behind the same protocol as the SQLite one: for tests, and for an
/// app that wants a cache only for the life of the process.
public final class InMemoryCacheStore: CacheStore, CacheMaintenance {
  private let entries = Mutex<[String: CacheEntry]>([:])

  public init() {}

  public func entry(for key: String) async throws -> CacheEntry? {
    entries.withLock { $0[key] }
  }

  public func store(_ entry: CacheEntry) async throws {
    entries.withLock { $0[entry.key] = entry }
  }

  public func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
    entries.withLock { entries in
      entries[key]?.storedAt = storedAt
      entries[key]?.validators = validators
    }
  }

  public func remove(_ key: String) async throws {
    _ = entries.withLock { $0.removeValue(forKey: key) }
  }

  public func statistics() async throws -> CacheStatistics {
    entries.withLock { entries in
      let times = entries.values.map(\.storedAt)
      return CacheStatistics(
        file: nil, bytes: Int64(entries.values.reduce(0) { $0 + $1.payload.count }),
        entries: entries.count, oldest: times.min(), newest: times.max(),
        entriesByOrigin: Dictionary(
          entries.keys.map { (CacheStatistics.origin(ofKey: $0), 1) }, uniquingKeysWith: +))
    }
  }

  public func clear(origin: String?) async throws -> Int {
    entries.withLock { entries in
      let before = entries.count
      if let origin {
        entries = entries.filter { CacheStatistics.origin(ofKey: $0.key) != origin }
      } else {
        entries.removeAll()
      }
      return before - entries.count
    }
  }
}
