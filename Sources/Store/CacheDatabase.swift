import Foundation
import GRDB

/// The cache database: one SQLite file (`cache.sqlite` in the data dir) in WAL mode behind a
/// GRDB pool, or an in-memory twin for tests, migrated to the schema this build knows.
///
/// A file written by a newer schema is refused, never wiped. A file that is not a database, or
/// is corrupt, is moved aside (`cache.sqlite.corrupt-<timestamp>`) with a warning and replaced:
/// the cache is disposable. Other processes may write the same file: writes wait up to
/// `busyTimeout` for each other.
public final class CacheDatabase: Sendable {
  let writer: any DatabaseWriter
  /// The file, or nil in memory.
  public let file: URL?

  private init(writer: any DatabaseWriter, file: URL?) {
    self.writer = writer
    self.file = file
  }

  /// Opens (creating if needed) the database at `file`.
  public static func open(
    at file: URL, busyTimeout: TimeInterval = 5, warn: @Sendable (String) -> Void = { _ in }
  ) throws -> CacheDatabase {
    do {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw StoreError.unusable(
        file: file.path, reason: "its folder could not be created (\(error.localizedDescription))")
    }
    do {
      return try connect(file, busyTimeout: busyTimeout)
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
  public static func inMemory() throws -> CacheDatabase {
    let queue = try DatabaseQueue()
    try migrate(queue, file: ":memory:")
    return CacheDatabase(writer: queue, file: nil)
  }

  private static func connect(_ file: URL, busyTimeout: TimeInterval) throws -> CacheDatabase {
    var configuration = Configuration()
    configuration.busyMode = .timeout(busyTimeout)
    configuration.foreignKeysEnabled = true
    do {
      let pool = try DatabasePool(path: file.path, configuration: configuration)
      try migrate(pool, file: file.path)
      return CacheDatabase(writer: pool, file: file)
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      throw error
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError.unusable(file: file.path, reason: "\(error)")
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
        reason: "it is damaged and could not be moved aside (\(error.localizedDescription))")
    }
    for suffix in ["-wal", "-shm"] {
      let companion = URL(fileURLWithPath: file.path + suffix)
      try? FileManager.default.moveItem(
        at: companion, to: URL(fileURLWithPath: aside.path + suffix))
    }
    return aside
  }

  /// The schema, one migration per version (the talk's Realm `schemaVersion`, with a migrator).
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
    return migrator
  }

  private static func migrate(_ writer: any DatabaseWriter, file: String) throws {
    let migrator = migrator
    let superseded = try writer.read { db -> [String]? in
      guard try migrator.hasBeenSuperseded(db) else { return nil }
      let known = Set(migrator.migrations)
      return try migrator.appliedIdentifiers(db).filter { !known.contains($0) }.sorted()
    }
    if let superseded { throw StoreError.newerSchema(file: file, unknownMigrations: superseded) }
    try migrator.migrate(writer)
  }
}
