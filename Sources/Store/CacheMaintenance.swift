import Foundation
import GRDB

/// What is in the cache, for `kernel cache stats`.
public struct CacheStatistics: Sendable, Equatable {
  public var file: String?
  public var bytes: Int64
  public var movies: Int
  public var entries: Int
  /// When the oldest and the newest answer were stored.
  public var oldest: Date?
  public var newest: Date?
}

/// Looking after the cache as a whole, behind a protocol so the command front never names the
/// database type.
public protocol CacheMaintenance: Sendable {
  func statistics() throws -> CacheStatistics
  /// Deletes every stored answer in one transaction; returns how many movies were removed.
  func clear() throws -> Int
}

extension CacheDatabase: CacheMaintenance {
  public func statistics() throws -> CacheStatistics {
    try writer.read { db in
      let movies = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM movie") ?? 0
      let entries = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM cache_entry") ?? 0
      let range = try Row.fetchOne(
        db,
        sql: """
          SELECT MIN(t), MAX(t) FROM (SELECT storedAt t FROM movie UNION ALL
          SELECT storedAt t FROM cache_entry)
          """)
      let pages = try Int64.fetchOne(db, sql: "PRAGMA page_count") ?? 0
      let pageSize = try Int64.fetchOne(db, sql: "PRAGMA page_size") ?? 0
      return CacheStatistics(
        file: file?.path, bytes: pages * pageSize, movies: movies, entries: entries,
        oldest: (range?[0] as Double?).map(Date.init(timeIntervalSince1970:)),
        newest: (range?[1] as Double?).map(Date.init(timeIntervalSince1970:)))
    }
  }

  public func clear() throws -> Int {
    try writer.write { db in
      let movies = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM movie") ?? 0
      try db.execute(
        sql: "DELETE FROM movie_cast; DELETE FROM movie; DELETE FROM actor; DELETE FROM cache_entry"
      )
      return movies
    }
  }
}
