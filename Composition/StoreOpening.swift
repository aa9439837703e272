import Domain
import Foundation
import Layers
import Store
import Synchronization

/// The cache store in the data dir, opened when the first call reads or writes it (never by
/// validation, `graph` or `doctor`), once, whoever asks first; the store or the failure is
/// kept, so a cache that cannot be opened is tried, and reported, once per run.
///
/// When the cache is `required` (a stack answers from it alone) the failure is thrown to the
/// caller; otherwise the first call warns and every call goes on as if the cache were empty.
final class CacheOpening: CacheStore, CacheMaintenance {
  private let file: URL
  private let required: Bool
  private let warn: @Sendable (String) -> Void
  private let opened = Mutex<Result<SQLiteCacheStore, StoreError>?>(nil)
  private let warned = Mutex(false)

  private let budget: SQLiteCacheStore.Budget

  init(
    file: URL, required: Bool, budget: SQLiteCacheStore.Budget = .unbounded,
    warn: @escaping @Sendable (String) -> Void
  ) {
    self.file = file
    self.required = required
    self.budget = budget
    self.warn = warn
  }

  /// The open store, opening it on first use.
  func store() throws(StoreError) -> SQLiteCacheStore {
    let result = opened.withLock { opened in
      if let opened { return opened }
      let result: Result<SQLiteCacheStore, StoreError>
      do {
        result = .success(try SQLiteCacheStore.open(at: file, budget: budget, warn: warn))
      } catch let error as StoreError {
        result = .failure(error)
      } catch {
        result = .failure(
          .unusable(
            file: file.path, cause: "\(error)", fix: "move it aside or choose another --data-dir"))
      }
      opened = result
      return result
    }
    return try result.get()
  }

  /// The store to use for a call: nil when it cannot be opened and the call can do without.
  private func usable() throws -> SQLiteCacheStore? {
    do {
      return try store()
    } catch {
      if required { throw error }
      let first = warned.withLock { warned in
        defer { warned = true }
        return !warned
      }
      if first { warn("\(error) Answering from the api without the cache.") }
      return nil
    }
  }

  func entry(for key: String) async throws -> CacheEntry? {
    try await usable()?.entry(for: key)
  }

  func store(_ entry: CacheEntry) async throws { try await usable()?.store(entry) }

  /// The file's changes; with no usable file, none (the stream ends).
  func changes() -> AsyncThrowingStream<Void, any Error> {
    (try? usable())?.changes() ?? AsyncThrowingStream { $0.finish() }
  }

  func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
    try await usable()?.renew(key, storedAt: storedAt, validators: validators)
  }

  func remove(_ key: String) async throws { try await usable()?.remove(key) }

  func entries(for keys: [String]) async throws -> [CacheEntry?] {
    guard let store = try usable() else { return keys.map { _ in nil } }
    return try await store.entries(for: keys)
  }

  func store(_ entries: [CacheEntry]) async throws { try await usable()?.store(entries) }

  func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] {
    try await usable()?.query(scope: scope, query) ?? []
  }

  func settleEdit(of key: String, _ settlement: EditSettlement) async throws {
    try await usable()?.settleEdit(of: key, settlement)
  }

  func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool {
    try await usable()?.removeEntity(key, goneAt: date) ?? false
  }

  /// A feed's page needs the store: a sync that cannot keep what it is told fails.
  func apply(_ changes: StoredChanges) async throws -> Bool {
    try await store().apply(changes)
  }

  func storedAtIfWhole(_ key: String) async throws -> Date? {
    try await usable()?.storedAtIfWhole(key)
  }

  /// With no cache file yet, none: nothing is created to find nothing.
  func pendingKeys() async throws -> [String] {
    guard FileManager.default.fileExists(atPath: file.path) else { return [] }
    return try await usable()?.pendingKeys() ?? []
  }

  /// With no cache file yet, an empty cache: nothing is created to count nothing.
  func statistics() async throws -> CacheStatistics {
    guard FileManager.default.fileExists(atPath: file.path) else {
      return CacheStatistics(
        file: file.path, bytes: 0, entries: 0, oldest: nil, newest: nil, maxBytes: budget.maxBytes)
    }
    return try await store().statistics()
  }

  func clear(origin: String?) async throws -> Int {
    guard FileManager.default.fileExists(atPath: file.path) else { return 0 }
    return try await store().clear(origin: origin)
  }
}

/// The outbox in the data dir, opened when a write is first kept, listed or synced (never by
/// validation, `graph` or `doctor`); a file that cannot be opened fails every use with its own
/// sentence, and is left as it is.
final class OutboxOpening: OutboxStore {
  private let file: URL
  private let opened = Mutex<SQLiteOutboxStore?>(nil)

  init(file: URL) { self.file = file }

  private func store() throws -> SQLiteOutboxStore {
    try opened.withLock { opened in
      if let opened { return opened }
      let store = try SQLiteOutboxStore.open(at: file)
      opened = store
      return store
    }
  }

  func add(_ write: PendingWrite) async throws -> PendingWrite { try await store().add(write) }
  func writes() async throws -> [PendingWrite] { try await store().writes() }
  func writes(editing key: String, partition: String) async throws -> [PendingWrite] {
    try await store().writes(editing: key, partition: partition)
  }
  func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite? {
    try await store().lease(origin: origin, now: now, until: until)
  }
  func settle(_ id: Int64, _ outcome: WriteOutcome) async throws {
    try await store().settle(id, outcome)
  }
  func makeDue(origin: String, now: Date) async throws {
    try await store().makeDue(origin: origin, now: now)
  }
  func retry(_ id: Int64, now: Date) async throws -> PendingWrite? {
    try await store().retry(id, now: now)
  }
  func drop(_ id: Int64) async throws -> PendingWrite? { try await store().drop(id) }
  func replace(
    _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
  ) async throws
    -> PendingWrite?
  {
    try await store().replace(
      id, request: request, idempotencyKey: idempotencyKey, ifMatch: ifMatch, now: now)
  }
}
