import Domain
import Foundation
import GRDB

/// A result with where it came from and how old it is.
public struct Cached<Value: Sendable>: Sendable {
  public let value: Value
  public let origin: ResultOrigin
  /// Seconds since it was fetched from the network.
  public let age: TimeInterval
  /// The validators of the stored copy, for a conditional request.
  let validators: CacheValidators
}

extension Cached: Equatable where Value: Equatable {}

/// Stores what the base answers and answers from the store, under a `CachePolicy`.
///
/// A result is stored in one transaction with its entry (when, and the `ETag` or
/// `Last-Modified` it came with); a failed base call never deletes anything, and a value the
/// base could not deliver whole never replaces a stored one. The stored copy's validators are
/// offered to the base (see `ConditionalRequest`); a 304 serves the copy and makes it new.
/// Every answer is recorded with its origin and age (see `Provenance`).
public struct CachingLayer: ServiceLayer {
  public let database: CacheDatabase
  public let policy: CachePolicy
  let now: @Sendable () -> Date
  private let background = PendingWork()

  public init(
    database: CacheDatabase, policy: CachePolicy, now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.database = database
    self.policy = policy
    self.now = now
  }

  /// Returns once every refresh this layer started behind an answer (stale-while-revalidate)
  /// has stored its result or failed.
  public func settle() async { await background.settle() }

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    guard let mapping = operation.cache else { return try await next() }
    let result = try await answer(operation, mapping, next)
    Provenance.record(Provenance(origin: result.origin, age: result.age))
    return result.value
  }

  private func answer<Value: Sendable>(
    _ operation: ServiceCall<Value>, _ mapping: CacheMapping<Value>,
    _ next: @escaping @Sendable () async throws -> Value
  ) async throws -> Cached<Value> {
    let stored = try cached(operation, mapping)
    switch policy {
    case .cacheOnly:
      guard let stored else { throw CacheMiss(what: operation.summary) }
      return stored
    case .networkOnly:
      return try await fetch(operation, mapping, next, stored: nil)
    case .cacheFirst(let maxAge):
      if let stored, stored.age <= maxAge.seconds { return stored }
      return try await fetchOrFallBack(operation, mapping, next, stored: stored)
    case .networkFirst, .cacheThenNetwork:
      return try await fetchOrFallBack(operation, mapping, next, stored: stored)
    case .staleWhileRevalidate(let maxAge):
      guard let stored else { return try await fetch(operation, mapping, next, stored: nil) }
      if stored.age > maxAge.seconds {
        background.start { _ = try? await fetch(operation, mapping, next, stored: stored) }
      }
      return stored
    }
  }

  /// The stored copy and the base's answer, in that order, each tagged: at most two updates,
  /// and the second only when it differs from the first. The talk's double callback, done right.
  public func updates<Value: Sendable & Equatable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) -> AsyncThrowingStream<Cached<Value>, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task {
        guard let mapping = operation.cache else {
          continuation.finish(throwing: CacheMiss(what: operation.summary))
          return
        }
        let stored = try? cached(operation, mapping)
        if let stored { continuation.yield(stored) }
        do {
          let fresh = try await fetch(operation, mapping, next, stored: stored)
          if fresh.value != stored?.value { continuation.yield(fresh) }
          continuation.finish()
        } catch  where stored != nil && Self.canFallBack(error) {
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  // MARK: The store

  func cached<Value: Sendable>(_ operation: ServiceCall<Value>, _ mapping: CacheMapping<Value>)
    throws
    -> Cached<Value>?
  {
    let found = try database.writer.read { db -> (Value, Date, CacheEntry?)? in
      guard let (value, storedAt) = try mapping.read(db) else { return nil }
      return (value, storedAt, try CacheEntry.find(operation.key, in: db))
    }
    guard let (value, storedAt, entry) = found else { return nil }
    let fetchedAt = entry?.storedAt ?? storedAt
    return Cached(
      value: value, origin: .cache, age: max(0, now().timeIntervalSince(fetchedAt)),
      validators: entry?.validators ?? CacheValidators())
  }

  /// Asks the base, offering the stored copy's validators; stores a new answer with its
  /// entry in one transaction, or renews the copy on `NotModified`.
  private func fetch<Value: Sendable>(
    _ operation: ServiceCall<Value>, _ mapping: CacheMapping<Value>,
    _ next: @escaping @Sendable () async throws -> Value,
    stored: Cached<Value>?
  ) async throws -> Cached<Value> {
    let received = ConditionalRequest.Received()
    let offered = stored.map(\.validators).flatMap { $0.isEmpty ? nil : $0 }
    do {
      let value = try await ConditionalRequest.$offered.withValue(offered) {
        try await ConditionalRequest.$received.withValue(received) { try await next() }
      }
      let fetchedAt = now()
      let validators = received.validators ?? CacheValidators()
      try await database.writer.write { db in
        try mapping.write(value, fetchedAt, db)
        try CacheEntry(key: operation.key, storedAt: fetchedAt, validators: validators).save(in: db)
      }
      return Cached(value: value, origin: .network, age: 0, validators: validators)
    } catch is NotModified {
      guard let stored else { throw CacheMiss(what: operation.summary) }
      let renewedAt = now()
      try await database.writer.write { db in
        try CacheEntry(key: operation.key, storedAt: renewedAt, validators: stored.validators).save(
          in: db)
      }
      return Cached(value: stored.value, origin: .cache, age: 0, validators: stored.validators)
    }
  }

  private func fetchOrFallBack<Value: Sendable>(
    _ operation: ServiceCall<Value>, _ mapping: CacheMapping<Value>,
    _ next: @escaping @Sendable () async throws -> Value,
    stored: Cached<Value>?
  ) async throws -> Cached<Value> {
    do {
      return try await fetch(operation, mapping, next, stored: stored)
    } catch {
      if let stored, Self.canFallBack(error) { return stored }
      throw error
    }
  }

  /// Whether a base failure may be covered by the stored copy: unreachable or unavailable, not
  /// a refusal (4xx), bad data or cancellation.
  static func canFallBack(_ error: any Error) -> Bool {
    let failure = ServiceFailure.of(error)
    return failure == .unreachable || failure == .unavailable
  }
}

/// When a key's result was fetched, and the validators it came with.
struct CacheEntry {
  let key: String
  let storedAt: Date
  let validators: CacheValidators

  static func find(_ key: String, in db: Database) throws -> CacheEntry? {
    let statement = try db.cachedStatement(
      sql: "SELECT storedAt, etag, lastModified FROM cache_entry WHERE key = ?")
    guard let row = try Row.fetchOne(statement, arguments: [key]) else { return nil }
    return CacheEntry(
      key: key, storedAt: Date(timeIntervalSince1970: row[0]),
      validators: CacheValidators(etag: row[1], lastModified: row[2]))
  }

  func save(in db: Database) throws {
    let statement = try db.cachedStatement(
      sql: """
        INSERT INTO cache_entry (key, storedAt, etag, lastModified) VALUES (?, ?, ?, ?)
        ON CONFLICT(key) DO UPDATE SET storedAt = excluded.storedAt, etag = excluded.etag,
          lastModified = excluded.lastModified
        """)
    try statement.execute(arguments: [
      key, storedAt.timeIntervalSince1970, validators.etag, validators.lastModified,
    ])
  }
}

extension Duration {
  /// This duration in seconds.
  var seconds: TimeInterval {
    TimeInterval(components.seconds) + TimeInterval(components.attoseconds) / 1e18
  }
}
