import Foundation
import GRDB

/// The cache file's schema and how a file is brought to it.
extension SQLiteCacheStore {
  /// The schema, one migration per version (the talk's Realm `schemaVersion`, with a migrator).
  /// Migrations already shipped are never edited: a file at v1 is brought to v2 in place.
  static var migrator: DatabaseMigrator {
    var migrator = DatabaseMigrator()
    migrator.registerMigration("v1: movies, actors, cast, cache entries") { db in
      try db.execute(
        sql: """
          CREATE TABLE movie (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            year INTEGER NOT NULL,
            releaseDate TEXT NOT NULL,
            grossing INTEGER NOT NULL,
            rating REAL NOT NULL,
            storedAt REAL NOT NULL
          );
          CREATE INDEX movie_by_year_grossing ON movie(year, grossing DESC);
          CREATE INDEX movie_by_year_rating ON movie(year, rating DESC);
          CREATE TABLE actor (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE
          );
          CREATE TABLE movie_cast (
            movieId INTEGER NOT NULL REFERENCES movie(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            actorId INTEGER NOT NULL REFERENCES actor(id),
            PRIMARY KEY (movieId, position)
          ) WITHOUT ROWID;
          CREATE TABLE cache_entry (
            key TEXT PRIMARY KEY,
            storedAt REAL NOT NULL,
            etag TEXT,
            lastModified TEXT,
            payload BLOB
          ) WITHOUT ROWID;
          """)
    }
    // Answers are kept per call, whole: lists assembled from the movie tables answered calls
    // with rows other calls stored. Entries without a payload of their own go with them.
    migrator.registerMigration("v2: one entry per call, no shared movie tables") { db in
      try db.execute(
        sql: """
          DROP TABLE movie_cast;
          DROP TABLE actor;
          DROP TABLE movie;
          DELETE FROM cache_entry WHERE payload IS NULL;
          """)
    }
    // Copies stored before keys began with the environment's origin answer no call now, and
    // their dates, kept as seconds since 1970, read back a little off: they go.
    migrator.registerMigration("v3: keys by origin, dates exact") { db in
      try db.execute(sql: "DELETE FROM cache_entry")
    }
    // The budget evicts the least recently used first, and the oldest past its age.
    migrator.registerMigration("v4: when each answer was last used") { db in
      try db.execute(
        sql: """
          ALTER TABLE cache_entry ADD COLUMN usedAt REAL NOT NULL DEFAULT 0;
          UPDATE cache_entry SET usedAt = storedAt;
          CREATE INDEX cache_entry_by_use ON cache_entry(usedAt);
          CREATE INDEX cache_entry_by_age ON cache_entry(storedAt);
          """)
    }
    // A copy changed by writes the api has not taken yet is answered as pending.
    migrator.registerMigration("v5: copies changed by pending writes") { db in
      try db.execute(sql: "ALTER TABLE cache_entry ADD COLUMN pending INTEGER NOT NULL DEFAULT 0")
    }
    // Entities stored once (the source of truth): an answer of entities keeps their keys; an
    // entity row names its partition and type (`scope`), which local queries look among, and
    // keeps the api's copy under an edit (`original`) to put back when the write is undone.
    // The cache is disposable: the answers stored as calls before are dropped, not converted.
    migrator.registerMigration("v6: entities stored once") { db in
      try db.execute(
        sql: """
          DELETE FROM cache_entry;
          ALTER TABLE cache_entry ADD COLUMN scope TEXT;
          ALTER TABLE cache_entry ADD COLUMN refs TEXT;
          ALTER TABLE cache_entry ADD COLUMN original BLOB;
          ALTER TABLE cache_entry ADD COLUMN stale INTEGER NOT NULL DEFAULT 0;
          CREATE INDEX cache_entry_by_scope ON cache_entry(scope) WHERE scope IS NOT NULL;
          """)
    }
    // The budget evicts first the entities no stored list holds: the lists' rows, indexed
    // apart, are read for their references without reading every entity.
    migrator.registerMigration("v7: the rows that hold entities") { db in
      try db.execute(
        sql: "CREATE INDEX cache_entry_lists ON cache_entry(key) WHERE refs IS NOT NULL")
    }
    return migrator
  }

  static func migrate(_ writer: any DatabaseWriter, file: String) throws {
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
      do {
        let superseded = try writer.read { db -> [String]? in
          guard try migrator.hasBeenSuperseded(db) else { return nil }
          let known = Set(migrator.migrations)
          return try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
        }
        if let superseded {
          throw StoreError.newerSchema(file: file, unknownMigrations: superseded)
        }
        try migrator.migrate(writer)
        return
      } catch let error as StoreError {
        throw error
      } catch {
        let completed = try? writer.read { db -> Bool in
          db.clearSchemaCache()
          return try migrator.hasCompletedMigrations(db)
        }
        if completed == true { return }
        if attempt == 4 { throw error }
        // SQLite refuses a deferred transaction that would deadlock at once, without waiting:
        // give the other's migration time to commit before reading again.
        usleep(UInt32(attempt) * 20_000)
      }
    }
  }
}
