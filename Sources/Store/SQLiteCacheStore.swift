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
/// `busyTimeout` for their locks, and opening waits at most that long in all.
///
/// A row that cannot be read (a `storedAt` that is text, or out of any plausible range; a
/// payload that is not a blob) is a miss with one warning, and is replaced by the next answer:
/// the cache is disposable, and another program may have written to it.
public final class SQLiteCacheStore: CacheStore, CacheMaintenance {
  /// The file, or nil in memory.
  public let file: URL?
  public let budget: Budget
  private let database: any DatabaseWriter
  private let warn: @Sendable (String) -> Void
  /// Keys already warned about, so each bad row is said once per process.
  private let warned = Mutex<Set<String>>([])
  /// The fields whose local-query index this process has made (or found) already.
  private let indexed = Mutex<Set<String>>([])

  private init(
    file: URL?, database: any DatabaseWriter, budget: Budget = .unbounded,
    warn: @escaping @Sendable (String) -> Void
  ) {
    self.file = file
    self.database = database
    self.budget = budget
    self.warn = warn
  }

  private func writer() -> any DatabaseWriter { database }

  private var name: String { file?.path ?? "in memory" }

  /// Opens (creating if needed) the database at `file`. Throws `StoreError.unusable` or
  /// `.newerSchema`, each naming the file, the cause and the fix.
  public static func open(
    at file: URL, busyTimeout: Duration = .milliseconds(1500), budget: Budget = .unbounded,
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) throws -> SQLiteCacheStore {
    // Opening runs several statements: together they wait no longer than one may.
    let patience = Patience(perStatement: busyTimeout)
    patience.startOpening()
    defer { patience.endOpening() }
    try checkKinds(of: file)
    do {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw StoreError.unusable(
        file: file.path,
        cause: "its folder could not be created (\(error.localizedDescription))",
        fix: "choose another --data-dir")
    }
    let writer = try connectRepairing(file, busyTimeout: busyTimeout, warn: warn, patience)
    if let maxBytes = budget.maxBytes { bounded(writer, to: maxBytes) }
    return SQLiteCacheStore(file: file, database: writer, budget: budget, warn: warn)
  }

  /// Refuses a cache file, or a `-wal` or `-shm` beside it, that is not a regular file (a
  /// directory, a FIFO, a device, a socket): SQLite would fail on it with an I/O error that
  /// reads like a full disk, or block on a FIFO.
  private static func checkKinds(of file: URL) throws {
    for path in [file.path, file.path + "-wal", file.path + "-shm"] {
      var status = stat()
      guard stat(path, &status) == 0 else { continue }
      let kind: String
      switch status.st_mode & S_IFMT {
      case S_IFREG: continue
      case S_IFDIR: kind = "a directory"
      case S_IFIFO: kind = "a FIFO"
      case S_IFCHR, S_IFBLK: kind = "a device"
      case S_IFSOCK: kind = "a socket"
      default: kind = "not a regular file"
      }
      let name = path == file.path ? "it" : URL(fileURLWithPath: path).lastPathComponent
      throw StoreError.unusable(
        file: file.path, cause: "\(name) is \(kind)",
        fix: "remove \(path == file.path ? "it" : name) or choose another --data-dir")
    }
  }

  /// The writing connection; a file that is not a database or is corrupt is moved aside (with
  /// a warning) and a new one started.
  private static func connectRepairing(
    _ file: URL, busyTimeout: Duration, warn: @escaping @Sendable (String) -> Void,
    _ patience: Patience? = nil
  ) throws -> any DatabaseWriter {
    do {
      return try connect(file, busyTimeout: busyTimeout, patience)
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      let aside = try moveAside(file)
      warn(
        "The cache \(file.path) was damaged (\(error.resultCode)); it was moved to \(aside.lastPathComponent)"
          + " and a new one was started.")
      return try connect(file, busyTimeout: busyTimeout)
    }
  }

  /// A database in memory, for tests.
  public static func inMemory(warn: @escaping @Sendable (String) -> Void = { _ in }) throws
    -> SQLiteCacheStore
  {
    let queue = try DatabaseQueue()
    try migrate(queue, file: ":memory:")
    return SQLiteCacheStore(file: nil, database: queue, warn: warn)
  }

  /// `opening`: the patience the opening started with, whose budget this shares; else one of
  /// its own.
  private static func connect(_ file: URL, busyTimeout: Duration, _ opening: Patience? = nil)
    throws -> any DatabaseWriter
  {
    let patience = opening ?? Patience(perStatement: busyTimeout)
    var configuration = Configuration()
    configuration.busyMode = .callback { tries in patience.mayWait(tries: tries) }
    let owned = opening == nil
    if owned { patience.startOpening() }
    defer { if owned { patience.endOpening() } }
    do {
      // One connection in WAL mode: other processes still read while one writes, and a read
      // here costs a third of what a pool's would (it takes no reader from a pool; measured:
      // 8 µs against 23 µs, the C API's 6 µs). WAL is set here rather than by GRDB's
      // `journalMode = .wal`, which then checks the `-wal` file's size for its pools' sake: when
      // another connection closes last between that check's two steps and removes the file, the
      // open fails with "no such file" (a soak run caught two connections opening a new file so).
      configuration.prepareDatabase { db in
        // First of all: a new file is made to give freed pages back (`incremental_vacuum`);
        // once anything is written (turning it to WAL writes its header) it takes a `VACUUM`
        // (`CacheBudget.shrinkable`). Only when it is not so already: setting it writes the
        // header, so every run that only reads would write and sync the file.
        if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 {
          try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
        }
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        guard mode == "wal" else {
          throw StoreError.unusable(
            file: file.path,
            cause: "it could not be turned to WAL mode (it is in \(mode ?? "no") mode)",
            fix: "move it aside or choose another --data-dir")
        }
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
      }
      let queue = try queue(file, configuration)
      try migrate(queue, file: file.path)
      try checkShape(queue)
      return queue
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      throw error
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError.unusable(
        file: file.path, cause: StoreError.cause(of: error), fix: StoreError.fix(for: error))
    }
  }

  /// Refuses a file whose `cache_entry` is not the table Kernel made (a view, say a recursive
  /// one that never ends, or a table with a trigger): another program made it, and reading it
  /// could hang or do anything. It is damaged, so moved aside (`connectRepairing`).
  private static func checkShape(_ queue: DatabaseQueue) throws {
    guard try !queue.read({ try StoredRow.isForeign("cache_entry", in: $0) }) else {
      throw DatabaseError(
        resultCode: .SQLITE_CORRUPT,
        message: "its cache_entry is not the table Kernel made (a view or a trigger)")
    }
  }

  /// The file opened. Turning a new file to WAL while another process does the same can be
  /// refused at once, without the busy handler (SQLite's way out of a deadlock): a few more
  /// tries, after short pauses, settle it.
  private static func queue(_ file: URL, _ configuration: Configuration) throws -> DatabaseQueue {
    var attempt = 1
    while true {
      do {
        return try DatabaseQueue(path: file.path, configuration: configuration)
      } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY && attempt < 5 {
        usleep(UInt32(attempt) * 20_000)
        attempt += 1
      }
    }
  }

  /// Moves the file and its WAL companions aside; returns where the file went.
  private static func moveAside(_ file: URL) throws -> URL {
    let stamp = Int(Date().timeIntervalSince1970)
    let aside = file.deletingLastPathComponent().appendingPathComponent(
      "\(file.lastPathComponent).corrupt-\(stamp)")
    do {
      try FileManager.default.moveItem(at: file, to: aside)
    } catch {
      throw StoreError.unusable(
        file: file.path,
        cause: "it is damaged and could not be moved aside (\(error.localizedDescription))",
        fix: "delete it or choose another --data-dir")
    }
    for suffix in ["-wal", "-shm"] {
      let companion = URL(fileURLWithPath: file.path + suffix)
      try? FileManager.default.moveItem(
        at: companion, to: URL(fileURLWithPath: aside.path + suffix))
    }
    return aside
  }

  // MARK: CacheStore

  /// One indexed SELECT, through GRDB's `unsafeRead`: a single statement is consistent on its
  /// own, and the transaction `read` wraps it in made a lookup 5x the C API's (`kernel-bench
  /// store`: 37 µs against 6.7 µs; with `unsafeRead`, 8 µs against 5.6 µs).
  /// An answer last marked used more than `useResolution` ago is marked again, in a write of
  /// its own: the budget evicts the least recently used first.
  public func entry(for key: String) async throws -> CacheEntry? {
    try await entries(for: [key])[0]
  }

  /// The rows of `keys` read in one transaction (the entities of a list are one consistent
  /// copy), each by the same cached indexed SELECT; rows last marked used long ago are marked
  /// again together.
  public func entries(for keys: [String]) async throws -> [CacheEntry?] {
    let rows = try await using("read") {
      try writer().unsafeRead { db in
        let statement = try db.cachedStatement(
          sql: "SELECT \(StoredRow.columns) FROM cache_entry WHERE key = ?")
        if keys.count == 1 { return [try Row.fetchOne(statement, arguments: [keys[0]])] }
        var rows: [Row?] = []
        try db.inTransaction(.deferred) {
          rows = try keys.map { try Row.fetchOne(statement, arguments: [$0]) }
          return .commit
        }
        return rows
      }
    }
    var found: [CacheEntry?] = []
    found.reserveCapacity(keys.count)
    var used: [String] = []
    let now = Date().timeIntervalSince1970
    for (key, row) in zip(keys, rows) {
      guard let row else {
        found.append(nil)
        continue
      }
      switch StoredRow.entry(key: key, row) {
      case .success(let entry):
        if budget.maxBytes != nil, let last = Double.fromDatabaseValue(row[4]),
          now - last > Self.useResolution
        {
          used.append(key)
        }
        found.append(entry)
      case .failure(let problem):
        let first = warned.withLock { $0.insert(key).inserted }
        if first {
          warn(
            "The cache entry \(key) in \(name) cannot be read (\(problem.reason)); it is treated"
              + " as missing and will be replaced.")
        }
        found.append(nil)
      }
    }
    if !used.isEmpty {
      let marked = used
      try? await writer().write { db in
        for key in marked {
          try db.execute(
            sql: "UPDATE cache_entry SET usedAt = ? WHERE key = ?", arguments: [now, key])
        }
      }
    }
    return found
  }

  public func store(_ entry: CacheEntry) async throws { try await store([entry]) }

  /// One upsert per row in one transaction, written in place for the same reason as reads; in
  /// the same transaction, what the budget no longer allows goes (see `evict`) and the pages it
  /// freed are cut off the file, which shrinks when the log is next folded in (see `bounded`).
  /// An entity row from the api never replaces one whose edit is pending.
  public func store(_ entries: [CacheEntry]) async throws {
    guard let last = entries.last else { return }
    try await using("written") {
      try writer().write { db in
        let statement = try db.cachedStatement(
          sql: """
            INSERT INTO cache_entry (key, payload, storedAt, etag, lastModified, usedAt, pending,
              scope, refs, original, stale)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(key) DO UPDATE SET payload = excluded.payload,
              storedAt = excluded.storedAt, etag = excluded.etag,
              lastModified = excluded.lastModified, usedAt = excluded.usedAt,
              pending = excluded.pending, scope = excluded.scope, refs = excluded.refs,
              original = excluded.original, stale = excluded.stale
            WHERE excluded.scope IS NULL OR excluded.pending = 1 OR cache_entry.pending = 0
            """)
        let now = Date().timeIntervalSince1970
        for entry in entries {
          try statement.execute(arguments: [
            entry.key, entry.payload, entry.storedAt.timeIntervalSince1970, entry.validators.etag,
            entry.validators.lastModified, now, entry.isPending, entry.scope,
            entry.references?.joined(separator: "\n"), entry.original, entry.isStale,
          ])
        }
        if try evict(db, keeping: last.key, now: now) {
          try db.execute(sql: "PRAGMA incremental_vacuum")
        }
      }
    }
  }

  /// Settles the edit of the entity under `key`: taken by the api, it stays as edited but stale
  /// (the next network read refreshes it); not taken, the api's copy it edited is put back. An
  /// answer stored whole is dropped either way.
  public func settleEdit(of key: String, taken: Bool) async throws {
    try await using("written") {
      try writer().write { db in
        try db.execute(
          sql: taken
            ? "UPDATE cache_entry SET pending = 0, original = NULL, stale = 1, etag = NULL,"
              + " lastModified = NULL WHERE key = ? AND scope IS NOT NULL"
            : "UPDATE cache_entry SET payload = coalesce(original, payload), pending = 0,"
              + " original = NULL WHERE key = ? AND scope IS NOT NULL",
          arguments: [key])
        try db.execute(
          sql: "DELETE FROM cache_entry WHERE key = ? AND scope IS NULL", arguments: [key])
      }
    }
  }

  /// The entities of `scope` a local query selects, in SQL: each field read by `json_extract`,
  /// with an index on the scope and the field made the first time a query asks for it, so a
  /// query filters by index rather than decoding every entity.
  public func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] {
    for field in query.fields where !LocalQuery.isField(field) {
      throw LocalQueryRefused(field: field)
    }
    let extract = { (field: String) in "json_extract(CAST(payload AS TEXT), '$.\(field)')" }
    try await index(query.filters.map(\.field) + query.order.prefix(1).map(\.field), extract)
    var sql = "SELECT \(StoredRow.columns), key FROM cache_entry WHERE scope = ?"
    var arguments: [(any DatabaseValueConvertible)?] = [scope]
    for filter in query.filters {
      switch filter.value {
      case .integer(let number):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(number)
      case .number(let number):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(number)
      case .string(let text):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(text)
      case .boolean(let flag):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(flag ? 1 : 0)
      case .null, .array, .object:
        // Nothing stored equals null, a list or an object (as in the in-memory store).
        return []
      }
    }
    if !query.order.isEmpty {
      sql +=
        " ORDER BY "
        + query.order.map { "\(extract($0.field)) \($0.descending ? "DESC" : "ASC")" }
        .joined(separator: ", ") + ", key"
    }
    if let limit = query.limit {
      sql += " LIMIT ?"
      arguments.append(max(0, limit))
    }
    let statementArguments = StatementArguments(arguments)
    let rows = try await using("read") {
      try writer().unsafeRead { db in
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: statementArguments)
      }
    }
    // A row another program damaged is left out, as a lookup leaves it out.
    return rows.compactMap { row in
      guard let key = StoredRow.text(row[10]),
        case .success(let entry) = StoredRow.entry(key: key, row)
      else { return nil }
      return entry
    }
  }

  /// The indexes a local query on `fields` uses, made once per process and field.
  private func index(_ fields: [String], _ extract: (String) -> String) async throws {
    let missing = fields.filter { field in indexed.withLock { !$0.contains(field) } }
    guard !missing.isEmpty else { return }
    try await using("written") {
      try writer().write { db in
        for field in missing {
          let name = "cache_entity_by_" + field.replacingOccurrences(of: ".", with: "_")
          try db.execute(
            sql: """
              CREATE INDEX IF NOT EXISTS "\(name)" ON cache_entry(scope, \(extract(field)))
              WHERE scope IS NOT NULL
              """)
        }
      }
    }
    indexed.withLock { $0.formUnion(missing) }
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
        let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
        return CacheStatistics(
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
      }
    }
  }

  public func clear(origin: String?) async throws -> Int {
    try await maintaining("cleared") {
      try await writer().write { db in
        guard let origin else {
          let entries = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cache_entry") ?? 0
          try db.execute(sql: "DELETE FROM cache_entry")
          return entries
        }
        // The origin's keys, `<origin> …`, sort from `<origin> ` to just before `<origin>!`.
        try db.execute(
          sql: "DELETE FROM cache_entry WHERE key >= ? AND key < ?",
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
  private func using<T>(_ doing: String, _ work: () async throws -> T) async throws -> T {
    do { return try await work() } catch let error as DatabaseError {
      throw StoreError.failed(file: name, doing: doing, cause: StoreError.cause(of: error))
    }
  }
}
