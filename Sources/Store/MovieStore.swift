import Domain
import Foundation
import GRDB

/// A movie as the cache holds it: the value and when it was stored.
public struct StoredMovie: Sendable, Hashable {
  public let movie: Movie
  public let storedAt: Date
}

/// Movies kept in the cache database.
///
/// Storing a movie again replaces its fields and its cast (in order), as Realm's
/// `add(_:update:)` did. Every write is one transaction; every query binds its values.
public struct MovieStore: Sendable {
  public let database: CacheDatabase

  public init(database: CacheDatabase) { self.database = database }

  /// Stores `movies` in one transaction, stamped `storedAt`. `progress` hears how many are
  /// written so far, every thousand and at the end, from inside the transaction.
  public func store(
    _ movies: [Movie], storedAt: Date = Date(), progress: (@Sendable (Int) -> Void)? = nil
  ) throws {
    try database.writer.write { db in
      try Self.upsert(movies, storedAt: storedAt, in: db, progress: progress)
    }
  }

  static func upsert(
    _ movies: [Movie], storedAt: Date, in db: Database, progress: (@Sendable (Int) -> Void)? = nil
  ) throws {
    let movie = try db.cachedStatement(
      sql: """
        INSERT INTO movie (id, name, year, releaseDate, grossing, rating, storedAt) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET name = excluded.name, year = excluded.year,
          releaseDate = excluded.releaseDate, grossing = excluded.grossing, rating = excluded.rating,
          storedAt = excluded.storedAt
        """)
    let clearCast = try db.cachedStatement(sql: "DELETE FROM movie_cast WHERE movieId = ?")
    let actor = try db.cachedStatement(
      sql:
        "INSERT INTO actor (name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = excluded.name RETURNING id"
    )
    let cast = try db.cachedStatement(
      sql: "INSERT INTO movie_cast (movieId, position, actorId) VALUES (?, ?, ?)")
    let stamp = storedAt.timeIntervalSince1970
    for (index, value) in movies.enumerated() {
      try movie.execute(arguments: [
        value.id, value.name, value.year, CalendarDay.string(from: value.releaseDate),
        value.grossing,
        value.rating, stamp,
      ])
      try clearCast.execute(arguments: [value.id])
      for (position, member) in value.cast.enumerated() {
        guard let actorId = try Int64.fetchOne(actor, arguments: [member.name]) else { continue }
        try cast.execute(arguments: [value.id, position, actorId])
      }
      if let progress, (index + 1) % 1000 == 0 || index + 1 == movies.count { progress(index + 1) }
    }
  }

  // Each read below is one SELECT, consistent on its own: `unsafeRead` spares the BEGIN and
  // COMMIT that `read` wraps around it (measured: about 5% of a top-10 query).
  public func movie(id: Int) throws -> StoredMovie? {
    try database.writer.unsafeRead { db in try Self.movie(id: id, in: db) }
  }

  /// The year's highest-grossing stored movies, from every one stored for that year.
  public func topGrossing(year: Int, limit: Int = 10) throws -> [StoredMovie] {
    try database.writer.unsafeRead { db in try Self.topGrossing(year: year, limit: limit, in: db) }
  }

  /// The year's best-rated stored movies, ties by grossing.
  public func topRated(year: Int, limit: Int = 10) throws -> [StoredMovie] {
    try database.writer.unsafeRead { db in try Self.topRated(year: year, limit: limit, in: db) }
  }

  static func movie(id: Int, in db: Database) throws -> StoredMovie? {
    try movies(in: db, sql: "SELECT * FROM movie WHERE id = ?", arguments: [id], order: "m.id")
      .first
  }

  static func topGrossing(year: Int, limit: Int, in db: Database) throws -> [StoredMovie] {
    try movies(
      in: db, sql: "SELECT * FROM movie WHERE year = ? ORDER BY grossing DESC, id LIMIT ?",
      arguments: [year, limit], order: "m.grossing DESC, m.id")
  }

  static func topRated(year: Int, limit: Int, in db: Database) throws -> [StoredMovie] {
    try movies(
      in: db,
      sql: "SELECT * FROM movie WHERE year = ? ORDER BY rating DESC, grossing DESC, id LIMIT ?",
      arguments: [year, limit], order: "m.rating DESC, m.grossing DESC, m.id")
  }

  /// How many movies are stored.
  public func count() throws -> Int {
    try database.writer.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM movie") ?? 0 }
  }

  /// The movies `selection` picks, each with its cast in order, in `order`; one query.
  private static func movies(
    in db: Database, sql selection: String, arguments: StatementArguments, order: String
  ) throws -> [StoredMovie] {
    let statement = try db.cachedStatement(
      sql: """
        SELECT m.id, m.name, m.year, m.releaseDate, m.grossing, m.rating, m.storedAt, a.name
        FROM (\(selection)) m
        LEFT JOIN movie_cast c ON c.movieId = m.id
        LEFT JOIN actor a ON a.id = c.actorId
        ORDER BY \(order), c.position
        """)
    var result: [StoredMovie] = []
    var current: (row: Row, cast: [MovieActor])?
    func flush() {
      guard let (row, cast) = current else { return }
      let day: String = row[3]
      let movie = Movie(
        id: row[0], name: row[1], year: row[2],
        releaseDate: CalendarDay.date(from: day) ?? Date(timeIntervalSince1970: 0),
        grossing: row[4], rating: row[5], cast: cast)
      result.append(StoredMovie(movie: movie, storedAt: Date(timeIntervalSince1970: row[6])))
    }
    let rows = try Row.fetchCursor(statement, arguments: arguments)
    while let row = try rows.next() {
      let id: Int = row[0]
      if current.map({ ($0.row[0] as Int) != id }) ?? true {
        flush()
        current = (row.copy(), [])
      }
      if let name: String = row[7] { current?.cast.append(MovieActor(name: name)) }
    }
    flush()
    return result
  }
}
