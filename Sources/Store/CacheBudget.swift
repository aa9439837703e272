import Foundation
import GRDB

/// `cache.maxBytes` and `cache.maxAgeDays`: what a store may hold, and how it keeps within it.
extension SQLiteCacheStore {
  /// How much a cache may hold: `cache.maxBytes` and `cache.maxAgeDays`.
  public struct Budget: Sendable, Equatable {
    /// The most bytes the file may take; past it the entities no stored answer holds go, then
    /// the least recently used rows, in the transaction that stored the newest one. Nil: no
    /// bound.
    public var maxBytes: Int64?
    /// Answers fetched longer ago than this go when the next answer is stored. Nil: kept.
    public var maxAge: TimeInterval?
    /// Making room that takes at least this long is said (the store's `warn`): how long, and
    /// how many rows went, so its time is not taken for the api's.
    public var reportsEvictionAfter: Duration

    /// A budget of at most `maxBytes` (`cache.maxBytes`) and answers at most `maxAge` seconds
    /// old (`cache.maxAgeDays`); nil for either: unbounded. Making room that takes a second or
    /// more is said (`reportsEvictionAfter`).
    public init(
      maxBytes: Int64? = nil, maxAge: TimeInterval? = nil,
      reportsEvictionAfter: Duration = .seconds(1)
    ) {
      self.maxBytes = maxBytes
      self.maxAge = maxAge
      self.reportsEvictionAfter = reportsEvictionAfter
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

  /// Deletes answers older than the budget's age, then, until the pages in use fit `maxBytes`,
  /// the entities that no stored answer holds (least recently used first), then the least
  /// recently used rows of any kind; never `kept`, the row just stored, nor a row showing an
  /// edit not yet sent: it is the user's until its write settles. How many went.
  func evict(_ db: Database, keeping kept: String, now: TimeInterval) throws -> Int {
    var evicted = 0
    if let maxAge = budget.maxAge {
      try db.execute(
        sql: "DELETE FROM cache_entry WHERE storedAt < ? AND key <> ? AND pending = 0",
        arguments: [now - maxAge, kept])
      evicted = db.changesCount
    }
    guard let maxBytes = budget.maxBytes, try Self.bytesInUse(db) > maxBytes else {
      return evicted
    }
    evicted += try evictOrphans(db, keeping: kept, within: maxBytes)
    while try Self.bytesInUse(db) > maxBytes {
      try db.execute(
        sql: """
          DELETE FROM cache_entry WHERE key IN
            (SELECT key FROM cache_entry WHERE key <> ? AND pending = 0 ORDER BY usedAt LIMIT 1)
          """, arguments: [kept])
      guard db.changesCount > 0 else { break }
      evicted += db.changesCount
    }
    return evicted
  }

  /// Deletes, least recently used first, the entity rows no stored list refers to and no
  /// pending write edits, until the pages in use fit `maxBytes`; how many went. The lists'
  /// references are read once, through the index of list rows (`cache_entry_lists`).
  private func evictOrphans(_ db: Database, keeping kept: String, within maxBytes: Int64) throws
    -> Int
  {
    var held = Set<String>()
    let lists = try Row.fetchCursor(
      db, sql: "SELECT refs FROM cache_entry INDEXED BY cache_entry_lists WHERE refs IS NOT NULL")
    while let row = try lists.next() {
      // A damaged row's references (not text) hold nothing.
      guard let references = StoredRow.text(row[0]) else { continue }
      for key in references.split(separator: "\n") { held.insert(String(key)) }
    }
    let delete = try db.cachedStatement(sql: "DELETE FROM cache_entry WHERE key = ?")
    // In pages of 256, read before any is deleted: no row goes while a query reads the table.
    let page = try db.cachedStatement(
      sql: """
        SELECT key, usedAt FROM cache_entry
        WHERE scope IS NOT NULL AND pending = 0 AND key <> ? AND typeof(usedAt) = 'real'
          AND (usedAt, key) > (?, ?)
        ORDER BY usedAt, key LIMIT 256
        """)
    var after: (usedAt: Double, key: String) = (-.infinity, "")
    var evicted = 0
    paging: while try Self.bytesInUse(db) > maxBytes {
      let rows = try Row.fetchAll(page, arguments: [kept, after.usedAt, after.key])
      for row in rows {
        guard let key = StoredRow.text(row[0]), !held.contains(key) else { continue }
        try delete.execute(arguments: [key])
        evicted += 1
        if try Self.bytesInUse(db) <= maxBytes { break paging }
      }
      // Read field by field: GRDB's typed subscript traps on a value it cannot convert.
      guard rows.count == 256, let last = rows.last,
        let usedAt = Double.fromDatabaseValue(last[1]), let key = StoredRow.text(last[0])
      else { break }
      after = (usedAt, key)
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
