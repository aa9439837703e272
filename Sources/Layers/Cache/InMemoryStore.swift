import Domain
import Foundation
import Synchronization

/// The local store in memory — the stored answers and entities (`CacheStore`) and the kept
/// writes (`OutboxStore`) — behind the same protocols as the Store module's SQLite files: the
/// twin tests run the outbox's rules on (ordering, leases, conflicts, rollback), and a store for
/// an app that keeps nothing past the life of the process.
public final class InMemoryStore: CacheStore, CacheMaintenance, OutboxStore {
  private let entries = Mutex<[String: CacheEntry]>([:])
  /// The kept writes by id, with the time each one's lease ends (nil: not held).
  let kept = Mutex<(writes: [Int64: PendingWrite], leases: [Int64: Date], last: Int64)>(
    ([:], [:], 0))
  private let notices = ChangeNotices()

  /// An empty store.
  public init() {}

  /// Each write of this store, as it is made.
  public func changes() -> AsyncThrowingStream<Void, any Error> { notices.stream() }

  /// How many watch this store's changes now.
  public var watchers: Int { notices.watchers }

  public func entry(for key: String) async throws -> CacheEntry? {
    entries.withLock { $0[key] }
  }

  public func store(_ entry: CacheEntry) async throws { try await store([entry]) }

  public func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
    entries.withLock { entries in
      entries[key]?.storedAt = storedAt
      entries[key]?.validators = validators
    }
    notices.notify()
  }

  public func remove(_ key: String) async throws {
    _ = entries.withLock { $0.removeValue(forKey: key) }
    notices.notify()
  }

  public func entries(for keys: [String]) async throws -> [CacheEntry?] {
    entries.withLock { entries in keys.map { entries[$0] } }
  }

  public func store(_ new: [CacheEntry]) async throws {
    entries.withLock { entries in
      // An entity from the api never replaces one with an edit pending: the edit shows until
      // its write is settled.
      for entry in new
      where entry.scope == nil || entry.isPending || entries[entry.key]?.isPending != true {
        entries[entry.key] = entry.merged(into: entries[entry.key])
      }
    }
    notices.notify()
  }

  public func settleEdit(of key: String, _ settlement: EditSettlement) async throws {
    entries.withLock { entries in
      guard let entry = entries[key] else { return }
      entries[key] = entry.settled(settlement)
    }
    notices.notify()
  }

  public func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool {
    let removed = entries.withLock { Self.remove(key, goneAt: date, from: &$0) }
    if removed { notices.notify() }
    return removed
  }

  @discardableResult
  public func apply(_ changes: StoredChanges) async throws -> Bool {
    let applied = entries.withLock { entries in
      guard changes.follows(entries[changes.token.key]) else { return false }
      for entity in changes.entities {
        if var shown = entries[entity.key], shown.isPending {
          // The api's copy the edit was made of is what the new copy merges into.
          shown.payload = shown.original ?? shown.payload
          entries[entity.key]?.original = entity.merged(into: shown).payload
        } else {
          entries[entity.key] = entity.merged(into: entries[entity.key])
        }
      }
      for key in changes.gone { _ = Self.remove(key, goneAt: changes.goneAt, from: &entries) }
      entries[changes.token.key] = changes.token
      return true
    }
    if applied { notices.notify() }
    return applied
  }

  /// `removeEntity` on `entries`.
  private static func remove(
    _ key: String, goneAt date: Date?, from entries: inout [String: CacheEntry]
  ) -> Bool {
    guard entries[key]?.isPending != true else { return false }
    for (list, entry) in entries where entry.references?.contains(key) == true {
      entries[list]?.references = entry.references?.filter { $0 != key }
    }
    entries[key] = date.map { CacheEntry(key: key, payload: Data(), storedAt: $0, isGone: true) }
    return true
  }

  public func pendingKeys() async throws -> [String] {
    entries.withLock { $0.values.filter(\.isPending).map(\.key).sorted() }
  }

  public func storedAtIfWhole(_ key: String) async throws -> Date? {
    entries.withLock { entries in
      guard let list = entries[key], let keys = list.references,
        keys.allSatisfy({ entries[$0] != nil })
      else { return nil }
      return list.storedAt
    }
  }

  /// The SQLite store's query, by decoding each entity of the scope: what the twin is for.
  public func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] {
    if let field = query.fields.first(where: { !LocalQuery.isField($0) }) {
      throw LayerError.notAField(field)
    }
    let candidates = entries.withLock { $0.values.filter { $0.scope == scope } }
    let decoded = candidates.map { entry in
      (entry, try? JSONDecoder().decode(JSONValue.self, from: entry.payload))
    }
    let selected = decoded.filter { _, value in
      query.filters.allSatisfy { $0.holds(for: value) }
    }
    let ordered = selected.sorted { left, right in
      for order in query.order {
        let path = LocalQuery.path(order.field)
        let (a, b) = (left.1?[path], right.1?[path])
        let comparison = LocalQuery.compare(a, b)
        if comparison != 0 { return order.descending ? comparison > 0 : comparison < 0 }
      }
      return left.0.key < right.0.key
    }
    return Array(ordered.prefix(query.limit ?? Int.max).map(\.0))
  }

  /// What it holds; no file, its bytes the payloads'.
  public func statistics() async throws -> CacheStatistics {
    entries.withLock { entries in
      let times = entries.values.map(\.storedAt)
      var statistics = CacheStatistics(
        file: nil, bytes: Int64(entries.values.reduce(0) { $0 + $1.payload.count }),
        entries: entries.count, oldest: times.min(), newest: times.max(),
        entriesByOrigin: Dictionary(
          entries.keys.map { (CacheStatistics.origin(ofKey: $0), 1) }, uniquingKeysWith: +))
      for entry in entries.values where !entry.isGone {
        guard let scope = entry.scope else { continue }
        statistics.entitiesByModel[CacheStatistics.type(ofScope: scope), default: [:]][
          entry.modelVersion, default: 0] += 1
        statistics.entityScopes.insert(scope)
      }
      return statistics
    }
  }

  public func clear(origin: String?) async throws -> Int {
    let cleared = entries.withLock { entries in
      let before = entries.count
      entries = entries.filter { key, entry in
        entry.isPending || origin.map { CacheStatistics.origin(ofKey: key) != $0 } ?? false
      }
      return before - entries.count
    }
    notices.notify()
    return cleared
  }
}
