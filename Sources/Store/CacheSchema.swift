import Foundation
import GRDB

/// The cache file's schema and how a file is brought to it.
extension SQLiteCacheStore {
  /// The schema. The cache is disposable: a file an older Kernel made (its migrations numbered
  /// below the first here) is erased and made anew, never converted; a file a newer Kernel made
  /// (a migration numbered past the last here) is refused and left alone. So the migrations here
  /// are only those of the current schema; a change that keeps what is stored adds one.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    // Answers kept per call (`key`), with the validators they came with; entities stored once,
    // each row naming its partition and type (`scope`), which local queries look among; an
    // answer of entities keeps their keys (`refs`); a copy changed by writes the api has not
    // taken yet is `pending`, the api's copy kept beside it (`original`) to put back when the
    // write is undone. The budget evicts the least recently used first (`usedAt`), the oldest
    // past its age (`storedAt`), and before them the entities no stored answer holds: the
    // answers' rows, indexed apart, are read for their references without every entity.
    migrator.registerMigration("v8: answers and entities") { db in
      try db.execute(
        sql: """
          CREATE TABLE cache_entry (
            key TEXT PRIMARY KEY,
            storedAt REAL NOT NULL,
            etag TEXT,
            lastModified TEXT,
            payload BLOB,
            usedAt REAL NOT NULL DEFAULT 0,
            pending INTEGER NOT NULL DEFAULT 0,
            scope TEXT,
            refs TEXT,
            original BLOB,
            stale INTEGER NOT NULL DEFAULT 0
          ) WITHOUT ROWID;
          CREATE INDEX cache_entry_by_use ON cache_entry(usedAt);
          CREATE INDEX cache_entry_by_age ON cache_entry(storedAt);
          CREATE INDEX cache_entry_by_scope ON cache_entry(scope) WHERE scope IS NOT NULL;
          CREATE INDEX cache_entry_lists ON cache_entry(key) WHERE refs IS NOT NULL;
          """)
    }
    // The copies with an edit pending, found without reading the rest: each run checks that a
    // kept write still stands behind each (`Composed.reconcileEdits`).
    migrator.registerMigration("v9: pending edits") { db in
      try db.execute(
        sql: "CREATE INDEX cache_entry_pending ON cache_entry(key) WHERE pending = 1")
    }
    // Entities the api said do not exist (404, 410): a tombstone row each (`gone`), with no
    // payload and no scope, so the store answers "not found" for them and no list holds them.
    migrator.registerMigration("v10: tombstones") { db in
      try db.execute(sql: "ALTER TABLE cache_entry ADD COLUMN gone INTEGER NOT NULL DEFAULT 0")
    }
    // The version of its type's stored form an entity was stored at (`StoredModel`): a row of
    // an older version is migrated when read. Rows stored before are of the first version.
    migrator.registerMigration("v11: model versions") { db in
      try db.execute(
        sql: "ALTER TABLE cache_entry ADD COLUMN version INTEGER NOT NULL DEFAULT 1")
    }
    return migrator
  }

  /// The number a migration's name starts with: 8 for `v8: answers and entities`.
  static func version(of migration: String) -> Int? {
    guard migration.first == "v", let colon = migration.firstIndex(of: ":") else { return nil }
    return Int(migration.dropFirst().prefix(upTo: colon))
  }

  static func migrate(_ writer: any DatabaseWriter, file: String, busyTimeout: Duration) throws {
    let migrator = migrator
    // Two processes opening one new file race: each reads what is applied, then applies the
    // rest, one transaction per migration, so the loser's next migration finds the winner's
    // done ("no such table", "already exists") and rolls back; even reading what is applied can
    // fail while the other creates the table. Reading again settles it: what the other applied
    // is skipped. The check forgets the schema this connection cached first (its own
    // rolled-back migration had created `grdb_migrations`), and a check that fails is one more
    // try. Only an error that persists is the file's own. (A soak run caught two kernels
    // failing with "no such table: grdb_migrations".)
    for attempt in 1... {
      let started = ContinuousClock.now
      do {
        let unknown = try writer.read { db -> [String] in
          guard try migrator.hasBeenSuperseded(db) else { return [] }
          let known = Set(migrator.migrations)
          return try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
        }
        let first = migrator.migrations.compactMap(version).min() ?? 0
        let older = unknown.filter { (version(of: $0) ?? .max) < first }
        if older.count < unknown.count {
          throw StoreError.newerSchema(
            file: file, unknownMigrations: unknown.filter { !older.contains($0) })
        }
        if !older.isEmpty { try writer.erase() }
        try migrator.migrate(writer)
        return
      } catch let error as StoreError {
        throw error
      } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
        // SQLite refuses a deferred transaction that would deadlock at once, without waiting:
        // give the other's migration time to commit before trying again.
        guard mayTryAgain(attempt, started: started, busyTimeout: busyTimeout) else { throw error }
      } catch {
        let completed = try? writer.read { db -> Bool in
          db.clearSchemaCache()
          return try migrator.hasCompletedMigrations(db)
        }
        if completed == true { return }
        if attempt == 4 { throw error }
        // Give the other's migration time to commit before reading again.
        Thread.sleep(forTimeInterval: Double(attempt) * 0.02)
      }
    }
  }
}
