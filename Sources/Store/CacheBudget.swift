import Foundation
import GRDB

/// `cache.maxBytes` and `cache.maxAgeDays`: what a store may hold, and how it keeps within it.
extension SQLiteCacheStore {
  /// How much a cache may hold: `cache.maxBytes` and `cache.maxAgeDays`.
  public struct Budget: Sendable, Equatable {
    /// The most bytes the file may take; past it the least recently used answers go, in the
    /// transaction that stored the newest one. Nil: no bound.
    public var maxBytes: Int64?
    /// Answers fetched longer ago than this go when the next answer is stored. Nil: kept.
    public var maxAge: TimeInterval?

    public init(maxBytes: Int64? = nil, maxAge: TimeInterval? = nil) {
      self.maxBytes = maxBytes
      self.maxAge = maxAge
    }

    /// No bound at all.
    public static let unbounded = Budget()
  }

  /// A read marks its answer used again (for the budget's order) at most this often: a read
  /// stays one SELECT, and the order is right to the hour.
  static let useResolution: TimeInterval = 3600

  /// Keeps the log within a quarter of the budget: folded into the file that often, and cut
  /// back to that size after; then turns the file shrinkable (see `shrinkable`).
  static func bounded(_ writer: any DatabaseWriter, to maxBytes: Int64) {
    try? writer.writeWithoutTransaction { db in
      let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
      try db.execute(sql: "PRAGMA journal_size_limit = \(maxBytes / 4)")
      try db.execute(
        sql: "PRAGMA wal_autocheckpoint = \(max(16, min(1000, maxBytes / 4 / pageSize)))")
    }
    shrinkable(writer)
  }

  /// Turns a file made before the budget to incremental auto-vacuum, once (a `VACUUM`), so
  /// that what eviction frees is given back to the disk; new files are made so. When another
  /// process holds the file, the next opening tries again: eviction works either way, only the
  /// file does not shrink meanwhile.
  static func shrinkable(_ writer: any DatabaseWriter) {
    try? writer.writeWithoutTransaction { db in
      guard try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 else { return }
      try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
      try db.execute(sql: "VACUUM")
    }
  }

  /// Deletes answers older than the budget's age, then the least recently used until the
  /// pages in use fit `maxBytes` (never `kept`, the answer just stored); true when any went.
  func evict(_ db: Database, keeping kept: String, now: TimeInterval) throws -> Bool {
    var evicted = false
    if let maxAge = budget.maxAge {
      try db.execute(
        sql: "DELETE FROM cache_entry WHERE storedAt < ? AND key <> ?",
        arguments: [now - maxAge, kept])
      evicted = db.changesCount > 0
    }
    guard let maxBytes = budget.maxBytes else { return evicted }
    while try Self.bytesInUse(db) > maxBytes {
      try db.execute(
        sql: """
          DELETE FROM cache_entry WHERE key IN
            (SELECT key FROM cache_entry WHERE key <> ? ORDER BY usedAt LIMIT 1)
          """, arguments: [kept])
      guard db.changesCount > 0 else { break }
      evicted = true
    }
    return evicted
  }

  /// The bytes of the pages that hold data: the file's pages but the free ones.
  static func bytesInUse(_ db: Database) throws -> Int64 {
    let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
    let free = try Int64.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0
    let size = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
    return (pages - free) * size
  }
}
