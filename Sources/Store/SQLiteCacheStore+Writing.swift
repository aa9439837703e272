import Domain
import Foundation
import GRDB
import Layers

/// Writing rows: answers and entities stored, a changes feed's page applied, entities leaving
/// the store (a 404, a complete list, a feed's deletions); each in one transaction, within the
/// budget.
extension SQLiteCacheStore {
  /// One upsert per row in one transaction, written in place for the same reason as reads; in
  /// the same transaction, what the budget no longer allows goes (see `evict`) and the pages it
  /// freed are cut off the file, which shrinks when the log is next folded in (see `bounded`).
  /// An entity row from the api never replaces one whose edit is pending.
  public func store(_ entries: [CacheEntry]) async throws {
    guard let last = entries.last else { return }
    try await writing(keeping: last.key) { db in try Self.upsert(entries, in: db) }
  }

  /// Runs `write` in one transaction, then what the budget no longer allows goes (but the row
  /// under `kept`), and says so when that took long.
  func writing(keeping kept: String, _ write: @escaping (Database) throws -> Void)
    async throws
  {
    let slow = try await using("written") {
      try writer().write { db -> (rows: Int, took: Duration)? in
        try write(db)
        let clock = ContinuousClock()
        let started = clock.now
        let evicted = try evict(db, keeping: kept, now: Date().timeIntervalSince1970)
        guard evicted > 0 else { return nil }
        try db.execute(sql: "PRAGMA incremental_vacuum")
        let took = clock.now - started
        return took >= budget.reportsEvictionAfter ? (evicted, took) : nil
      }
    }
    if let slow {
      let seconds = slow.took / .seconds(1)
      warn(
        "Making room in the cache \(name) took \(String(format: "%.1f", seconds)) s:"
          + " \(slow.rows) stored \(slow.rows == 1 ? "row" : "rows") went to keep it within"
          + " cache.maxBytes or cache.maxAgeDays; the time shown for this command includes it.")
    }
  }

  /// The SQL of `stored` (a payload column) with the upserted entity's fields merged into it
  /// (`CacheEntry.mergesFields`: the last `?` bound, the new payload `excluded.payload`) when
  /// the row is an entity of the same version and JSON, as `CacheEntry.merged(into:)` does;
  /// else the new payload.
  static func merged(_ stored: String) -> String {
    """
    CASE WHEN ? AND cache_entry.scope IS NOT NULL AND cache_entry.gone = 0
      AND cache_entry.version = excluded.version AND json_valid(CAST(\(stored) AS TEXT))
      AND json_valid(CAST(excluded.payload AS TEXT))
    THEN CAST(json_patch(CAST(\(stored) AS TEXT), CAST(excluded.payload AS TEXT)) AS BLOB)
    ELSE excluded.payload END
    """
  }

  /// Stores `entries` in `db`, one upsert each; an entity row never replaces one whose edit is
  /// pending, and one that `mergesFields` is merged into the stored row.
  static func upsert(_ entries: [CacheEntry], in db: Database) throws {
    let statement = try db.cachedStatement(
      sql: """
        INSERT INTO cache_entry (key, payload, storedAt, etag, lastModified, usedAt, pending,
          scope, refs, original, stale, gone, version)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(key) DO UPDATE SET payload = \(merged("cache_entry.payload")),
          storedAt = excluded.storedAt, etag = excluded.etag,
          lastModified = excluded.lastModified, usedAt = excluded.usedAt,
          pending = excluded.pending, scope = excluded.scope, refs = excluded.refs,
          original = excluded.original, stale = excluded.stale, gone = excluded.gone,
          version = excluded.version
        WHERE excluded.scope IS NULL OR excluded.pending = 1 OR cache_entry.pending = 0
        """)
    let now = Date().timeIntervalSince1970
    for entry in entries {
      try statement.execute(arguments: [
        entry.key, entry.payload, entry.storedAt.timeIntervalSince1970, entry.validators.etag,
        entry.validators.lastModified, now, entry.isPending, entry.scope,
        entry.references?.joined(separator: "\n"), entry.original, entry.isStale, entry.isGone,
        entry.modelVersion, entry.mergesFields,
      ])
    }
  }

  /// Applies a page of a changes feed in one transaction (see `CacheStore.apply`), within the
  /// budget as `store` is.
  @discardableResult
  public func apply(_ changes: StoredChanges) async throws -> Bool {
    do {
      try await applyFollowingToken(changes)
      return true
    } catch is TokenMoved {
      return false
    }
  }

  /// Another sync moved the feed's token since the page was asked: the transaction ends
  /// unwritten.
  private struct TokenMoved: Error {}

  /// `apply`, throwing `TokenMoved` from its transaction when the stored token is not the one
  /// the page was asked with.
  private func applyFollowingToken(_ changes: StoredChanges) async throws {
    try await writing(keeping: changes.token.key) { db in
      let stored = try Row.fetchOne(
        db, sql: "SELECT payload, gone FROM cache_entry WHERE key = ?",
        arguments: [changes.token.key]
      ).map { row in
        CacheEntry(
          key: changes.token.key, payload: row["payload"] ?? Data(), storedAt: Date(),
          isGone: row["gone"] ?? false)
      }
      guard changes.follows(stored) else { throw TokenMoved() }
      try Self.upsert(changes.entities + [changes.token], in: db)
      let pending = try Self.pendingKeys(in: db)
      // The api's new copy of an entity whose edit is pending is what undoing the edit puts
      // back; the edit keeps showing. Only those few rows are visited: a statement for each of
      // a page's entities made `sync.changes_10k` 226 ms instead of 200 (medians of four).
      let original = try db.cachedStatement(
        sql: """
          UPDATE cache_entry SET original = CASE WHEN ?2 AND json_valid(CAST(original AS TEXT))
              AND json_valid(CAST(?1 AS TEXT))
            THEN CAST(json_patch(CAST(original AS TEXT), CAST(?1 AS TEXT)) AS BLOB) ELSE ?1 END
          WHERE key = ?3 AND pending = 1
          """)
      for entity in changes.entities where pending.contains(entity.key) {
        try original.execute(arguments: [entity.payload, entity.mergesFields, entity.key])
      }
      _ = try Self.remove(changes.gone, goneAt: changes.goneAt, pending: pending, in: db)
    }
  }

  /// The keys of the rows with an edit pending: few, and found by their own index.
  private static func pendingKeys(in db: Database) throws -> Set<String> {
    Set(
      try DatabaseValue.fetchAll(
        db, sql: "SELECT key FROM cache_entry INDEXED BY cache_entry_pending WHERE pending = 1"
      ).compactMap(StoredRow.text))
  }

  /// Takes the row under `key` out of every stored list and makes it a tombstone (with `date`)
  /// or deletes it, in one transaction (see `CacheStore.removeEntity`); a row with an edit
  /// pending stays.
  public func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool {
    try await using("written") {
      try writer().write { db in !(try Self.remove([key], goneAt: date, in: db)).isEmpty }
    }
  }

  /// `removeEntity` in `db`'s transaction; `pending`, the keys with an edit pending, when the
  /// caller has read them already.
  private static func remove(
    _ keys: [String], goneAt date: Date?, pending: Set<String>? = nil, in db: Database
  ) throws -> Set<String> {
    // Rows with an edit pending stay.
    let removed = Set(keys).subtracting(try pending ?? pendingKeys(in: db))
    guard !removed.isEmpty else { return [] }
    // A list's keys are its `refs` joined by newlines: each list is read once, through the
    // lists' own index, and written back only when it held a removed key (one statement per
    // removed key and list made a page of 2,000 deletions over 100 lists take seconds).
    let lists = try Row.fetchAll(
      db,
      sql: "SELECT key, refs FROM cache_entry INDEXED BY cache_entry_lists WHERE refs IS NOT NULL")
    let update = try db.cachedStatement(sql: "UPDATE cache_entry SET refs = ? WHERE key = ?")
    for list in lists {
      guard let key = StoredRow.text(list[0]), let refs = StoredRow.text(list[1]) else { continue }
      let held = refs.split(separator: "\n", omittingEmptySubsequences: false)
      let kept = held.filter { !removed.contains(String($0)) }
      guard kept.count < held.count else { continue }
      try update.execute(arguments: [kept.joined(separator: "\n"), key])
    }
    guard let date else {
      let delete = try db.cachedStatement(sql: "DELETE FROM cache_entry WHERE key = ?")
      for key in removed { try delete.execute(arguments: [key]) }
      return removed
    }
    let tombstone = try db.cachedStatement(
      sql: """
        INSERT INTO cache_entry (key, payload, storedAt, usedAt, gone) VALUES (?, X'', ?, ?, 1)
        ON CONFLICT(key) DO UPDATE SET payload = X'', storedAt = excluded.storedAt,
          etag = NULL, lastModified = NULL, usedAt = excluded.usedAt, pending = 0, scope = NULL,
          refs = NULL, original = NULL, stale = 0, gone = 1
        """)
    let now = Date().timeIntervalSince1970
    for key in removed {
      try tombstone.execute(arguments: [key, date.timeIntervalSince1970, now])
    }
    return removed
  }
}
