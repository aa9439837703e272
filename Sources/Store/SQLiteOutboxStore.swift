import Domain
import Foundation
import GRDB
import Layers

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The outbox on disk: `outbox.sqlite` in the data dir, beside the cache but never the cache's
/// file, since the cache is disposable (a damaged cache is moved aside, its rows evicted past
/// the budget) and a kept write is not: a damaged outbox is refused, never replaced, and no
/// budget touches it. Every change is one transaction; a write is on disk before `add`
/// returns.
///
/// Leases: a sync takes a write in an `IMMEDIATE` transaction (so two processes never take the
/// same one), holding it under its own name (`<host> <pid>`) until a time. Another process may
/// take it once that time has passed, or at once when the holder is a process of this host
/// that no longer runs (killed mid-send): the write is sent again with the same idempotency
/// key, which the api honours.
public final class SQLiteOutboxStore: OutboxStore {
  /// The outbox's file (`outbox.sqlite` in the data dir).
  public let file: URL
  private let queue: DatabaseQueue
  /// This process, as leases name it.
  let holder: String

  private init(file: URL, queue: DatabaseQueue, holder: String) {
    self.file = file
    self.queue = queue
    self.holder = holder
  }

  /// Opens (creating if needed) the outbox at `file`. A file that cannot be opened, is damaged
  /// or was written by a newer build is refused with one sentence, and left as it is.
  public static func open(at file: URL, busyTimeout: Duration = .seconds(5)) throws
    -> SQLiteOutboxStore
  {
    if let (cause, fix) = SQLiteCacheStore.unusableKind(of: file) {
      throw OutboxError(file: file.path, doing: "opened", cause: cause, fix: fix)
    }
    do {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
      var configuration = Configuration()
      configuration.busyMode = .timeout(busyTimeout.seconds)
      configuration.prepareDatabase { db in
        try db.execute(sql: "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
      }
      let queue = try FolderLock.opening(file, timeout: busyTimeout * 2) {
        let queue = try DatabaseQueue(path: file.path, configuration: configuration)
        if try queue.read({ try migrator.hasBeenSuperseded($0) }) {
          throw OutboxError(
            file: file.path, doing: "opened", cause: "a newer version of Kernel wrote it",
            fix: "update Kernel; it was left untouched")
        }
        try migrator.migrate(queue)
        return queue
      }
      // Another program's view or trigger in place of the table could hang every read.
      guard try !queue.read({ try StoredRow.isForeign("outbox_write", in: $0) }) else {
        throw OutboxError(
          file: file.path, doing: "opened",
          cause: "its outbox_write is not the table Kernel made (a view or a trigger)",
          fix: "it was left untouched; move it aside to start a new outbox")
      }
      return SQLiteOutboxStore(file: file, queue: queue, holder: Self.thisProcess)
    } catch let error as OutboxError {
      throw error
    } catch {
      throw OutboxError(
        file: file.path, doing: "opened", cause: StoreError.cause(of: error),
        fix: "it holds writes not yet sent, so it was left as it is: free space, fix its"
          + " permissions, or choose another --data-dir")
    }
  }

  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1: kept writes") { db in
      try db.execute(
        sql: """
          CREATE TABLE outbox_write (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            name TEXT NOT NULL,
            summary TEXT NOT NULL,
            origin TEXT NOT NULL,
            partition TEXT NOT NULL,
            orderingKey TEXT NOT NULL,
            idempotencyKey TEXT NOT NULL UNIQUE,
            request BLOB NOT NULL,
            invalidates TEXT NOT NULL,
            state TEXT NOT NULL,
            tries INTEGER NOT NULL DEFAULT 0,
            lastError TEXT,
            serverBody BLOB,
            createdAt REAL NOT NULL,
            nextTryAt REAL NOT NULL,
            leaseHolder TEXT,
            leaseUntil REAL
          );
          CREATE INDEX outbox_write_by_origin ON outbox_write(origin, state, id);
          CREATE INDEX outbox_write_by_key ON outbox_write(orderingKey, id);
          """)
    }
    // Conditional writes: the If-Match a write was made with, the ETag its conflict answered.
    migrator.registerMigration("v2: conditional writes") { db in
      try db.execute(
        sql: """
          ALTER TABLE outbox_write ADD COLUMN ifMatch TEXT;
          ALTER TABLE outbox_write ADD COLUMN serverETag TEXT;
          """)
    }
    // What each write's optimistic edits changed (PendingWrite.edits), as JSON: undoing one
    // write of a copy makes the others' again. A row from before has none.
    migrator.registerMigration("v3: edits") { db in
      try db.execute(sql: "ALTER TABLE outbox_write ADD COLUMN edits TEXT")
    }
    return migrator
  }

  /// `<host> <pid>`: who holds a lease.
  static var thisProcess: String {
    "\(hostName) \(getpid())"
  }

  private static var hostName: String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown" }
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Whether `holder` is a process of this host that no longer runs.
  static func isGone(_ holder: String) -> Bool {
    let parts = holder.split(separator: " ")
    guard parts.count == 2, String(parts[0]) == hostName, let pid = Int32(parts[1]) else {
      return false
    }
    return kill(pid, 0) == -1 && errno == ESRCH
  }

  // MARK: OutboxStore

  public func add(_ write: PendingWrite) async throws -> PendingWrite {
    try await changing("written") { db in
      try db.execute(
        sql: """
          INSERT INTO outbox_write (name, summary, origin, partition, orderingKey,
            idempotencyKey, request, invalidates, state, tries, lastError, serverBody,
            createdAt, nextTryAt, ifMatch, serverETag, edits)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          """,
        arguments: [
          write.name, write.summary, write.origin, write.partition, write.orderingKey,
          write.idempotencyKey, write.request, Self.joined(write.invalidates),
          write.state.rawValue, write.tries, write.lastError, write.serverBody,
          write.createdAt.timeIntervalSince1970, write.nextTryAt.timeIntervalSince1970,
          write.ifMatch, write.serverETag,
          write.edits.isEmpty
            ? nil : String(decoding: try JSONEncoder().encode(write.edits), as: UTF8.self),
        ])
      var kept = write
      kept.id = db.lastInsertedRowID
      return kept
    }
  }

  public func writes() async throws -> [PendingWrite] {
    try await reading { db in
      try OutboxRecord.order(OutboxRecord.Columns.id).fetchAll(db).map(\.write)
    }
  }

  /// Found by SQLite among the pending writes' edits: settling each of 1,000 kept writes must
  /// not read every other.
  public func writes(editing key: String, partition: String) async throws -> [PendingWrite] {
    try await reading { db in
      try OutboxRecord.fetchAll(
        db,
        sql: """
          SELECT * FROM outbox_write
          WHERE state = 'pending' AND partition = ? AND json_valid(edits)
            AND EXISTS (SELECT 1 FROM json_each(edits) WHERE json_each.key = ?)
          ORDER BY id
          """, arguments: [partition, key]
      ).map(\.write)
    }
  }

  public func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite? {
    let holder = holder
    return try await changing("leased") { db in
      let time = now.timeIntervalSince1970
      // Leases of processes of this host that died mid-send end now.
      let holders = try String.fetchAll(
        db,
        sql:
          "SELECT DISTINCT leaseHolder FROM outbox_write WHERE leaseUntil > ? AND leaseHolder <> ?",
        arguments: [time, holder])
      for gone in holders where Self.isGone(gone) {
        try db.execute(
          sql:
            "UPDATE outbox_write SET leaseHolder = NULL, leaseUntil = NULL WHERE leaseHolder = ?",
          arguments: [gone])
      }
      let records = try OutboxRecord.fetchCursor(
        db,
        sql: """
          SELECT * FROM outbox_write AS w
          WHERE w.origin = ? AND w.state = 'pending' AND w.nextTryAt <= ?
            AND (typeof(w.leaseUntil) NOT IN ('real', 'integer') OR w.leaseUntil <= ?)
            AND NOT EXISTS (SELECT 1 FROM outbox_write AS e
              WHERE e.orderingKey = w.orderingKey AND e.origin = w.origin AND e.id < w.id
                AND e.state IN ('pending', 'conflict'))
          ORDER BY w.id
          """, arguments: [origin, time, time])
      // A damaged row is never sent; the writes after it (of other keys) still are.
      var found: PendingWrite?
      while let write = try records.next()?.write {
        if write.state == .pending {
          found = write
          break
        }
      }
      guard let write = found else { return nil }
      try db.execute(
        sql: "UPDATE outbox_write SET leaseHolder = ?, leaseUntil = ? WHERE id = ?",
        arguments: [holder, until.timeIntervalSince1970, write.id])
      return write
    }
  }

  public func settle(_ id: Int64, _ outcome: WriteOutcome) async throws {
    let holder = holder
    try await changing("written") { db in
      let held = "id = ? AND leaseHolder = ?"
      switch outcome {
      case .sent:
        try db.execute(sql: "DELETE FROM outbox_write WHERE \(held)", arguments: [id, holder])
      case .pending(let error, let next):
        try db.execute(
          sql: """
            UPDATE outbox_write SET tries = tries + 1, lastError = ?, nextTryAt = ?,
              leaseHolder = NULL, leaseUntil = NULL WHERE \(held)
            """, arguments: [error, next.timeIntervalSince1970, id, holder])
      case .conflict(let error, let body, let etag):
        try db.execute(
          sql: """
            UPDATE outbox_write SET state = 'conflict', tries = tries + 1, lastError = ?,
              serverBody = ?, serverETag = ?, leaseHolder = NULL, leaseUntil = NULL
            WHERE \(held)
            """, arguments: [error, body, etag, id, holder])
      case .rejected(let error):
        try db.execute(
          sql: """
            UPDATE outbox_write SET state = 'rejected', tries = tries + 1, lastError = ?,
              leaseHolder = NULL, leaseUntil = NULL WHERE \(held)
            """, arguments: [error, id, holder])
      }
    }
  }

  public func makeDue(origin: String, now: Date) async throws {
    try await changing("written") { db in
      try db.execute(
        sql: """
          UPDATE outbox_write SET nextTryAt = ?
          WHERE origin = ? AND state = 'pending' AND nextTryAt > ?
          """,
        arguments: [now.timeIntervalSince1970, origin, now.timeIntervalSince1970])
    }
  }

  public func retry(_ id: Int64, now: Date) async throws -> PendingWrite? {
    try await changing("written") { db in
      try db.execute(
        sql: """
          UPDATE outbox_write SET state = 'pending', nextTryAt = ?, serverBody = NULL
          WHERE id = ?
          """, arguments: [now.timeIntervalSince1970, id])
      return try OutboxRecord.fetchOne(db, key: id)?.write
    }
  }

  public func drop(_ id: Int64) async throws -> PendingWrite? {
    let file = file.path
    return try await changing("written") { db in
      guard let write = try Self.unheld(id, in: db, file: file) else { return nil }
      try db.execute(sql: "DELETE FROM outbox_write WHERE id = ?", arguments: [id])
      return write
    }
  }

  public func replace(
    _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
  ) async throws -> PendingWrite? {
    let file = file.path
    return try await changing("written") { db in
      guard try Self.unheld(id, in: db, file: file) != nil else { return nil }
      try db.execute(
        sql: """
          UPDATE outbox_write SET request = ?, idempotencyKey = ?, ifMatch = ?, state = 'pending',
            nextTryAt = ?, serverBody = NULL, serverETag = NULL WHERE id = ?
          """, arguments: [request, idempotencyKey, ifMatch, now.timeIntervalSince1970, id])
      return try OutboxRecord.fetchOne(db, key: id)?.write
    }
  }

  /// The write `id`, nil when there is none; an error when a live sync holds it.
  private static func unheld(_ id: Int64, in db: Database, file: String) throws -> PendingWrite? {
    guard let record = try OutboxRecord.fetchOne(db, key: id) else { return nil }
    if let (holder, until) = record.lease, until > Date(), !isGone(holder) {
      throw OutboxError(
        file: file, doing: "changed", cause: "write \(id) is being sent by \(holder)",
        fix: "try again when that sync ends")
    }
    return record.write
  }

  /// Cache keys, one a line (a key holds no line break: it is a path).
  static func joined(_ keys: [String]) -> String { keys.joined(separator: "\n") }

  private func changing<T: Sendable>(
    _ doing: String, _ work: @escaping @Sendable (Database) throws -> T
  ) async throws -> T {
    let path = file.path
    do {
      return try await queue.writeWithoutTransaction { db in
        var result: T?
        try db.inTransaction(.immediate) {
          result = try work(db)
          return .commit
        }
        guard let result else {
          throw OutboxError(
            file: path, doing: doing, cause: "the transaction did not run", fix: "retry")
        }
        return result
      }
    } catch let error as OutboxError {
      throw error
    } catch {
      throw OutboxError(
        file: file.path, doing: doing, cause: StoreError.cause(of: error),
        fix: "nothing was changed; try again")
    }
  }

  private func reading<T: Sendable>(_ work: @escaping @Sendable (Database) throws -> T)
    async throws -> T
  {
    do { return try await queue.read(work) } catch let error as OutboxError { throw error } catch {
      throw OutboxError(
        file: file.path, doing: "read", cause: StoreError.cause(of: error),
        fix: "try again")
    }
  }
}

/// The outbox could not be opened, read or changed: one sentence naming the file, the cause
/// and what to do. Its writes are kept as they were.
struct OutboxError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The outbox's file.
  public let file: String
  /// What could not be done: `opened`, `read`, `changed`.
  public let doing: String
  /// Why, as SQLite or the system said it.
  public let cause: String
  /// What to do about it.
  public let fix: String

  /// A config error (exit 78): the data dir's file cannot be used as it is.
  public var failure: ServiceFailure { .configuration }

  public var description: String { "The outbox \(file) could not be \(doing): \(cause); \(fix)." }
}
