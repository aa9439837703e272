import Domain
import Foundation
import GRDB
import Layers
import Synchronization

/// The cache store on disk: one SQLite file (`cache.sqlite` in the data dir) in WAL mode behind
/// a GRDB queue, or in memory for tests, migrated to the schema this build knows. One row per
/// call key holds that call's encoded answer, when it was fetched and its validators.
///
/// A file written by a newer schema is refused, never wiped. A file that is not a database, or
/// is corrupt, is moved aside (`cache.sqlite.corrupt-<timestamp>`) with a warning and replaced:
/// the cache is disposable. Other processes may use the same file: a statement waits at most
/// `busyTimeout` for their locks (GRDB's busy mode, as the outbox's file does).
///
/// A row that cannot be read (a `storedAt` that is text, or out of any plausible range; a
/// payload that is not a blob) is a miss with one warning, and is replaced by the next answer:
/// the cache is disposable, and another program may have written to it.
public final class SQLiteCacheStore: CacheStore, CacheMaintenance {
  /// The file, or nil in memory.
  public let file: URL?
  /// What the file may hold, kept in the write that stores the newest answer.
  public let budget: Budget
  private let database: any DatabaseWriter
  let warn: @Sendable (String) -> Void
  /// Keys already warned about, so each bad row is said once per process.
  private let warned = Mutex<Set<String>>([])
  /// The fields whose local-query index this process has made (or found) already.
  let indexed = Mutex<Set<String>>([])
  /// Who watches this store's changes; while anyone does, `poller` looks for other processes'.
  private let notices: ChangeNotices
  private let poller: ChangePoller

  /// How often a watched store asks SQLite whether another connection (another process, or
  /// another store on the same file) committed: `PRAGMA data_version`, one cheap call, for every
  /// watched store on one wake-up (`ChangeTicker`). `kernel-bench observe`: another process's
  /// commit reached the watcher in 100.5 ms (median; p99 100.9, budget 250), and 10 idle
  /// watchers cost 0.60% of a core (budget 1%; every 50 ms, 1.2%).
  public static let changePolling: Duration = .milliseconds(100)

  init(
    file: URL?, database: any DatabaseWriter, budget: Budget = .unbounded,
    warn: @escaping @Sendable (String) -> Void
  ) {
    self.file = file
    self.database = database
    self.budget = budget
    self.warn = warn
    let poller = ChangePoller(database: database, file: file)
    self.poller = poller
    // The poller tells the notices; they hold it weakly: no cycle keeps the file open.
    notices = ChangeNotices { [weak poller] anyone in anyone ? poller?.start() : poller?.stop() }
    poller.notices = notices
  }

  /// The changes this process commits, as it commits them, and those of any other connection
  /// to the file (another process's sync, write, refresh or `cache clear`), within
  /// `changePolling`.
  public func changes() -> AsyncThrowingStream<Void, any Error> { notices.stream() }

  /// How many watch this store's changes now.
  public var watchers: Int { notices.watchers }

  func writer() -> any DatabaseWriter { database }

  var name: String { file?.path ?? "in memory" }

  // MARK: CacheStore

  /// One indexed SELECT, through GRDB's `unsafeRead`: a single statement is consistent on its
  /// own, and the transaction `read` wraps it in made a lookup 5x the C API's (`kernel-bench
  /// store`: 37 µs against 6.7 µs; with `unsafeRead`, 8 µs against 5.6 µs). Its columns are
  /// read straight from the statement, as a list's are: through GRDB's `Row`, `store.read_100k`
  /// was 1.9x the C query here, straight 1.6x to 1.8x (medians of three runs).
  /// An answer last marked used more than `useResolution` ago is marked again, in a write of
  /// its own: the budget evicts the least recently used first.
  public func entry(for key: String) async throws -> CacheEntry? {
    try await entries(for: [key])[0]
  }

  /// The rows of `keys` read in one transaction (the entities of a list are one consistent
  /// copy); rows last marked used long ago are marked again together. One key is one cached
  /// indexed SELECT; more are joined from a list of their positions and keys (`listReads`),
  /// each row decoded where the statement holds it and put back at its position: a 100-entity
  /// list by one SELECT per key took 3x the C API's 100 lookups (`kernel-bench store`,
  /// `store.list_assemble_100`).
  public func entries(for keys: [String]) async throws -> [CacheEntry?] {
    let now = Date().timeIntervalSince1970
    let marksUse = budget.maxBytes != nil
    let read = try await using("read") {
      try writer().unsafeRead { db in
        var read = Read(keys: keys, now: now, marksUse: marksUse)
        if keys.count == 1 {
          let statement = try db.cachedStatement(
            sql: "SELECT \(CacheRecord.selection) FROM cache_entry WHERE key = ?")
          let rows = try Row.fetchCursor(statement, arguments: [keys[0]])
          if try rows.next() != nil {
            // Safe as `StoredRow.entry(key:current:)` says: the statement is on this row.
            read.note(
              0, StoredRow.entry(key: keys[0], current: statement),
              Double.fromDatabaseValue(
                DatabaseValue(
                  sqliteStatement: statement.sqliteStatement,
                  index: CInt(CacheRecord.Columns.usedAt.index))))
          }
          return read
        }
        try db.inTransaction(.deferred) {
          var start = 0
          while start < keys.count {
            let (sql, size) = Self.listRead(keys.count - start)
            let end = min(start + size, keys.count)
            // Positions within this read, each with its key; past the last key, none (NULL
            // matches no row).
            var arguments: [(any DatabaseValueConvertible)?] = []
            arguments.reserveCapacity(2 * size)
            for offset in 0..<size {
              arguments.append(offset)
              arguments.append(start + offset < end ? keys[start + offset] : nil)
            }
            let statement = try db.cachedStatement(sql: sql)
            let rows = try Row.fetchCursor(statement, arguments: StatementArguments(arguments))
            // The position is the column after the entry's (`CacheRecord.extra`).
            while try rows.next() != nil {
              let pointer = statement.sqliteStatement
              // Safe as `StoredRow.entry(key:current:)` says: the statement is on this row.
              guard
                let offset = StoredRow.count(
                  DatabaseValue(sqliteStatement: pointer, index: CInt(CacheRecord.extra))),
                start + offset < end
              else { continue }
              read.note(
                start + offset, StoredRow.entry(key: keys[start + offset], current: statement),
                Double.fromDatabaseValue(
                  DatabaseValue(
                    sqliteStatement: pointer, index: CInt(CacheRecord.Columns.usedAt.index))))
            }
            start = end
          }
          return .commit
        }
        return read
      }
    }
    for problem in read.problems where warned.withLock({ $0.insert(problem.key).inserted }) {
      warn(
        "The cache entry \(problem.key) in \(name) cannot be read (\(problem.reason)); it is"
          + " treated as missing and will be replaced.")
    }
    if !read.used.isEmpty {
      try? await writer().write { [read] db in
        for key in read.used {
          try db.execute(
            sql: "UPDATE cache_entry SET usedAt = ? WHERE key = ?", arguments: [read.now, key])
        }
      }
    }
    return read.found
  }

  /// What a read of some keys found, at their positions; the rows it could not read; the keys
  /// whose use is to be marked again (last marked more than `useResolution` before `now`).
  struct Read: Sendable {
    let keys: [String]
    let now: TimeInterval
    let marksUse: Bool
    var found: [CacheEntry?]
    var problems: [(key: String, reason: String)] = []
    var used: [String] = []

    init(keys: [String], now: TimeInterval, marksUse: Bool) {
      self.keys = keys
      self.now = now
      self.marksUse = marksUse
      found = Array(repeating: nil, count: keys.count)
    }

    mutating func note(
      _ position: Int, _ entry: Result<CacheEntry, StoredRow.Problem>, _ usedAt: Double?
    ) {
      switch entry {
      case .success(let entry):
        found[position] = entry
        if marksUse, let usedAt, now - usedAt > SQLiteCacheStore.useResolution {
          used.append(keys[position])
        }
      case .failure(let problem): problems.append((keys[position], problem.reason))
      }
    }
  }

  /// The SELECT of the rows of 2, 4, … 512 keys, each given with its position, made the first
  /// time a read needs it: a statement is found in GRDB's cache by its text, which is then not
  /// built again for each list, and a run that reads no list builds none.
  static func listRead(_ count: Int) -> (sql: String, size: Int) {
    let size = max(2, min(512, 1 << (Int.bitWidth - (count - 1).leadingZeroBitCount)))
    return listReads.withLock { made in
      if let sql = made[size] { return (sql, size) }
      let pairs = repeatElement("(?, ?)", count: size).joined(separator: ", ")
      let sql =
        "WITH wanted(position, key) AS (VALUES \(pairs)) SELECT \(CacheRecord.selection), position"
        + " FROM wanted JOIN cache_entry USING (key)"
      made[size] = sql
      return (sql, size)
    }
  }

  /// The list reads made so far, by size.
  private static let listReads = Mutex<[Int: String]>([:])

  public func store(_ entry: CacheEntry) async throws { try await store([entry]) }

  /// Settles a write's edit of the row under `key` (`CacheEntry.settled`), read and written
  /// in one transaction: an entity stays, taken or undone; an answer stored whole is dropped.
  /// A row that cannot be read is dropped too: it is refetched, never shown half-settled.
  public func settleEdit(of key: String, _ settlement: EditSettlement) async throws {
    try await using("written") {
      try writer().write { db in
        guard
          let row = try Row.fetchOne(
            db, sql: "SELECT \(CacheRecord.selection) FROM cache_entry WHERE key = ?",
            arguments: [key])
        else { return }
        guard case .success(let entry) = StoredRow.entry(key: key, row),
          let settled = entry.settled(settlement)
        else {
          return try db.execute(sql: "DELETE FROM cache_entry WHERE key = ?", arguments: [key])
        }
        try db.execute(
          sql: """
            UPDATE cache_entry SET payload = ?, pending = ?, original = ?, stale = ?, etag = ?,
              lastModified = ?
            WHERE key = ?
            """,
          arguments: [
            settled.payload, settled.isPending, settled.original, settled.isStale,
            settled.validators.etag, settled.validators.lastModified, key,
          ])
      }
    }
  }

  /// The keys of the rows with an edit pending, by their own index (`cache_entry_pending`):
  /// a run that finds none reads nothing else.
  public func pendingKeys() async throws -> [String] {
    try await using("read") {
      try writer().read { db in
        try DatabaseValue.fetchAll(
          db, sql: "SELECT key FROM cache_entry WHERE pending = 1 ORDER BY key"
        ).compactMap(StoredRow.text)
      }
    }
  }

  /// Counted in SQL over the keys as one JSON array, in one statement, with no row read or
  /// marked used: over a complete collection of 20,000 movies, offline `movies top-rated`
  /// answered in 55 ms instead of the 84 ms reading every row took (medians of five, release).
  /// In one statement, the list's keys never leaving SQLite: its lines made a JSON array
  /// (backslashes and quotes escaped; a key JSON cannot hold fails the statement, so the list is
  /// not said whole), each key looked up by the primary key, their count against the list's.
  /// 20,000 movies synced: a local query's answer took 44 ms reading the keys into Swift to
  /// count them, 20 ms this way, 2 ms without the check.
  public func storedAtIfWhole(_ key: String) async throws -> Date? {
    let array =
      #"'["' || replace(replace(replace(list.refs, '\', '\\'), '"', '\"'), char(10), '","')"#
      + #" || '"]'"#
    return try await using("read") {
      try writer().read { db in
        let row = try Row.fetchOne(
          db,
          sql: """
            SELECT list.storedAt, CASE
              WHEN typeof(list.refs) <> 'text' THEN 0
              WHEN list.refs = '' THEN 1
              ELSE (SELECT count(*) FROM json_each(\(array)) AS wanted
                JOIN cache_entry AS held ON held.key = wanted.value)
                = length(list.refs) - length(replace(list.refs, char(10), '')) + 1
              END
            FROM cache_entry AS list WHERE list.key = ?
            """, arguments: [key])
        guard let row, Bool.fromDatabaseValue(row[1]) == true else { return nil }
        return StoredRow.date(row[0])
      }
    }
  }

  public func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
    try await using("written") {
      try writer().write { db in
        try db.execute(
          sql:
            "UPDATE cache_entry SET storedAt = ?, etag = ?, lastModified = ? WHERE key = ?",
          arguments: [
            storedAt.timeIntervalSince1970, validators.etag, validators.lastModified, key,
          ])
      }
    }
  }

  public func remove(_ key: String) async throws {
    try await using("written") {
      try writer().write { db in
        try db.execute(sql: "DELETE FROM cache_entry WHERE key = ?", arguments: [key])
      }
    }
  }

  // MARK: CacheMaintenance

  /// How many answers and entities the file holds, its size, and its oldest and newest answer.
  public func statistics() async throws -> CacheStatistics {
    try await maintaining("read") {
      try await writer().read { [file] db in
        // Only times a row can be read by count as the oldest or newest (see `StoredRow`).
        let row = try Row.fetchOne(
          db,
          sql: """
            SELECT COUNT(*),
              MIN(CASE WHEN \(StoredRow.readableTime) THEN storedAt END),
              MAX(CASE WHEN \(StoredRow.readableTime) THEN storedAt END)
            FROM cache_entry
            """)
        let origins = try Row.fetchAll(
          db,
          sql: """
            SELECT CASE WHEN instr(key, ' ') > 0 THEN substr(key, 1, instr(key, ' ') - 1)
              ELSE '' END AS origin, COUNT(*)
            FROM cache_entry GROUP BY origin
            """)
        let models = try Row.fetchAll(
          db,
          sql: """
            SELECT scope, version, COUNT(*) FROM cache_entry
            WHERE scope IS NOT NULL AND gone = 0 GROUP BY scope, version
            """)
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        var statistics = CacheStatistics(
          file: file?.path, bytes: pages * pageSize,
          entries: row.flatMap { Int.fromDatabaseValue($0[0]) } ?? 0,
          oldest: row.flatMap { StoredRow.date($0[1]) },
          newest: row.flatMap { StoredRow.date($0[2]) },
          maxBytes: budget.maxBytes,
          entriesByOrigin: Dictionary(
            origins.map {
              (String.fromDatabaseValue($0[0]) ?? "", Int.fromDatabaseValue($0[1]) ?? 0)
            },
            uniquingKeysWith: +)
        )
        for row in models {
          guard let scope = StoredRow.text(row[0]), let version = Int.fromDatabaseValue(row[1])
          else { continue }
          statistics.entitiesByModel[CacheStatistics.type(ofScope: scope), default: [:]][
            version, default: 0] += Int.fromDatabaseValue(row[2]) ?? 0
          statistics.entityScopes.insert(scope)
        }
        return statistics
      }
    }
  }

  public func clear(origin: String?) async throws -> Int {
    defer { notices.notify() }
    return try await maintaining("cleared") {
      try await writer().write { db in
        guard let origin else {
          try db.execute(sql: "DELETE FROM cache_entry WHERE pending = 0")
          return db.changesCount
        }
        // The origin's keys, `<origin> …`, sort from `<origin> ` to just before `<origin>!`.
        try db.execute(
          sql: "DELETE FROM cache_entry WHERE key >= ? AND key < ? AND pending = 0",
          arguments: [origin + " ", origin + "!"])
        return db.changesCount
      }
    }
  }

  /// Runs a command on the cache itself: a failure is the cache's, with what to do.
  private func maintaining<T>(_ doing: String, _ work: () async throws -> T) async throws -> T {
    do { return try await work() } catch let error as DatabaseError {
      throw StoreError.maintenance(
        file: name, doing: doing, cause: StoreError.cause(of: error),
        fix: StoreError.fix(for: error))
    }
  }

  /// Runs `work`, naming the file and the cause in words when SQLite fails it.
  func using<T>(_ doing: String, _ work: () async throws -> T) async throws -> T {
    do {
      let result = try await work()
      // A write is committed: whoever watches reads again.
      if doing == "written" { notices.notify() }
      return result
    } catch let error as DatabaseError {
      throw StoreError.failed(file: name, doing: doing, cause: StoreError.cause(of: error))
    }
  }
}
