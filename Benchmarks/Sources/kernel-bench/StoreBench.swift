import Dispatch
import Domain
import Foundation
import GRDBSQLite
import Store

/// The store against hand-written loops of prepared statements over the sqlite3 C API, on the
/// same schema (files made by `CacheDatabase`, WAL), with the same SQL, in one run.
enum StoreBench {
  static func run() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "kernel-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    try upsert(in: folder)
    try topGrossing(in: folder)
  }

  static func movies(_ count: Int, startingAt first: Int = 1) -> [Movie] {
    (first..<first + count).map { id in
      Movie(
        id: id, name: "Movie \(id)", year: 1920 + id % 100,
        releaseDate: Date(timeIntervalSince1970: Double(id) * 86_400),
        grossing: (id * 7_919) % 900_000_000, rating: Double(id % 100),
        cast: (0..<3).map { MovieActor(name: "Actor \((id * 3 + $0) % 5_000)") })
    }
  }

  /// Storing 10,000 movies with three cast members each into a new database, five times each.
  static func upsert(in folder: URL) throws {
    let batch = movies(10_000)
    var kernel: [Double] = []
    var c: [Double] = []
    for round in 0..<5 {
      let ours = folder.appendingPathComponent("ours-\(round).sqlite")
      let theirs = folder.appendingPathComponent("theirs-\(round).sqlite")
      let store = MovieStore(database: try CacheDatabase.open(at: ours))
      _ = try CacheDatabase.open(at: theirs)
      var start = DispatchTime.now().uptimeNanoseconds
      try store.store(batch)
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start))
      let connection = try SQLiteC(theirs.path)
      start = DispatchTime.now().uptimeNanoseconds
      try connection.store(batch)
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    let ratio = median(kernel) / median(c)
    print("store.upsert_10k kernel_ns=\(Int(median(kernel))) sqlite_c_ns=\(Int(median(c)))")
    print(
      "# 10,000 movies, 3 cast each, one transaction: kernel \(ContainerBench.format(ratio))x the C loop"
    )
    print(ratio <= 2 ? "# targets: all met" : "# targets missed: upsert over 2x the C loop")
  }

  /// One year's ten top-grossing movies with their cast, out of 100,000 stored.
  static func topGrossing(in folder: URL) throws {
    let file = folder.appendingPathComponent("large.sqlite")
    let store = MovieStore(database: try CacheDatabase.open(at: file))
    for chunk in stride(from: 1, to: 100_001, by: 10_000) {
      try store.store(movies(10_000, startingAt: chunk))
    }
    let connection = try SQLiteC(file.path)
    guard try store.topGrossing(year: 2016).map(\.movie) == (try connection.topGrossing(year: 2016))
    else {
      print("kernel-bench: store: the two queries disagree")
      return
    }
    let medians = Measurement(rounds: 15, targetSampleNanoseconds: 20_000_000).run([
      ("kernel", { n in for _ in 0..<n { blackHole(try? store.topGrossing(year: 2016)) } }),
      ("c", { n in for _ in 0..<n { blackHole(try? connection.topGrossing(year: 2016)) } }),
    ])
    let ours = medians["kernel"] ?? 0
    let theirs = medians["c"] ?? 0
    print("store.top_grossing_100k kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    print(
      "# year 2016 of 100,000 movies: kernel \(ContainerBench.format(ours / max(theirs, 1)))x the C query, \(Int(ours / 1000)) µs"
    )
    print(
      ours <= 2 * theirs && ours < 1_000_000
        ? "# targets: all met" : "# targets missed: over 2x the C query or over 1 ms")
  }
}

/// The baseline: one sqlite3 connection and hand-prepared statements, the same SQL as the store.
final class SQLiteC {
  private var db: OpaquePointer?

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  init(_ path: String) throws {
    guard sqlite3_open(path, &db) == SQLITE_OK else {
      throw Failure(description: "cannot open \(path)")
    }
    try exec("PRAGMA foreign_keys = ON")
  }

  deinit { sqlite3_close(db) }

  private func exec(_ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
      throw Failure(description: String(cString: sqlite3_errmsg(db)))
    }
  }

  private func prepare(_ sql: String) throws -> OpaquePointer? {
    var statement: OpaquePointer?
    guard
      sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        == SQLITE_OK
    else {
      throw Failure(description: String(cString: sqlite3_errmsg(db)))
    }
    return statement
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private func text(_ statement: OpaquePointer?, _ index: Int32, _ value: String) {
    sqlite3_bind_text(statement, index, value, -1, Self.transient)
  }

  func store(_ movies: [Movie]) throws {
    let movie = try prepare(
      """
      INSERT INTO movie (id, name, year, releaseDate, grossing, rating, storedAt) VALUES (?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT(id) DO UPDATE SET name = excluded.name, year = excluded.year,
        releaseDate = excluded.releaseDate, grossing = excluded.grossing, rating = excluded.rating,
        storedAt = excluded.storedAt
      """)
    let clearCast = try prepare("DELETE FROM movie_cast WHERE movieId = ?")
    let actor = try prepare(
      "INSERT INTO actor (name) VALUES (?) ON CONFLICT(name) DO UPDATE SET name = excluded.name RETURNING id"
    )
    let cast = try prepare("INSERT INTO movie_cast (movieId, position, actorId) VALUES (?, ?, ?)")
    defer { for statement in [movie, clearCast, actor, cast] { sqlite3_finalize(statement) } }
    let stamp = Date().timeIntervalSince1970
    try exec("BEGIN IMMEDIATE")
    for value in movies {
      sqlite3_bind_int64(movie, 1, Int64(value.id))
      text(movie, 2, value.name)
      sqlite3_bind_int64(movie, 3, Int64(value.year))
      text(movie, 4, CalendarDay.string(from: value.releaseDate))
      sqlite3_bind_int64(movie, 5, Int64(value.grossing))
      sqlite3_bind_double(movie, 6, value.rating)
      sqlite3_bind_double(movie, 7, stamp)
      guard sqlite3_step(movie) == SQLITE_DONE else { throw Failure(description: "movie insert") }
      sqlite3_reset(movie)
      sqlite3_bind_int64(clearCast, 1, Int64(value.id))
      _ = sqlite3_step(clearCast)
      sqlite3_reset(clearCast)
      for (position, member) in value.cast.enumerated() {
        text(actor, 1, member.name)
        guard sqlite3_step(actor) == SQLITE_ROW else { throw Failure(description: "actor insert") }
        let actorId = sqlite3_column_int64(actor, 0)
        _ = sqlite3_step(actor)
        sqlite3_reset(actor)
        sqlite3_bind_int64(cast, 1, Int64(value.id))
        sqlite3_bind_int64(cast, 2, Int64(position))
        sqlite3_bind_int64(cast, 3, actorId)
        guard sqlite3_step(cast) == SQLITE_DONE else { throw Failure(description: "cast insert") }
        sqlite3_reset(cast)
      }
    }
    try exec("COMMIT")
  }

  private lazy var topQuery: OpaquePointer? = try? prepare(
    """
    SELECT m.id, m.name, m.year, m.releaseDate, m.grossing, m.rating, m.storedAt, a.name
    FROM (SELECT * FROM movie WHERE year = ? ORDER BY grossing DESC, id LIMIT ?) m
    LEFT JOIN movie_cast c ON c.movieId = m.id
    LEFT JOIN actor a ON a.id = c.actorId
    ORDER BY m.grossing DESC, m.id, c.position
    """)

  func topGrossing(year: Int) throws -> [Movie] {
    guard let query = topQuery else { throw Failure(description: "cannot prepare the query") }
    defer { sqlite3_reset(query) }
    sqlite3_bind_int64(query, 1, Int64(year))
    sqlite3_bind_int64(query, 2, 10)
    var result: [Movie] = []
    var current:
      (
        id: Int, name: String, year: Int, day: String, grossing: Int, rating: Double,
        cast: [MovieActor]
      )?
    func flush() {
      guard let m = current else { return }
      result.append(
        Movie(
          id: m.id, name: m.name, year: m.year,
          releaseDate: CalendarDay.date(from: m.day) ?? Date(), grossing: m.grossing,
          rating: m.rating, cast: m.cast))
    }
    while sqlite3_step(query) == SQLITE_ROW {
      let id = Int(sqlite3_column_int64(query, 0))
      if current?.id != id {
        flush()
        current = (
          id, String(cString: sqlite3_column_text(query, 1)), Int(sqlite3_column_int64(query, 2)),
          String(cString: sqlite3_column_text(query, 3)), Int(sqlite3_column_int64(query, 4)),
          sqlite3_column_double(query, 5), []
        )
      }
      if let name = sqlite3_column_text(query, 7) {
        current?.cast.append(MovieActor(name: String(cString: name)))
      }
    }
    flush()
    return result
  }
}
