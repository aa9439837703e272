import Dispatch
import Domain
import Foundation
import Layers
import MoviesKit
import MoviesTesting
import Store

/// The store as a source of truth, against the same work in SQLite's C API in one run: one
/// entity among 1,000,000, a 100-entity list assembled from its ids, a local query over 100,000
/// stored movies (with the same index), one comparing two fields, and 1,000 list answers of 10
/// movies stored.
enum EntityBench {
  static let partition = "http://127.0.0.1:8080/api/"
  static var scope: String { partition + "|Movie" }

  /// A movie entity row as the caching layer keeps it: its JSON, under `Movie/<id>`.
  static func entity(_ id: Int, year: Int, rating: Int) -> CacheEntry {
    let json =
      #"{"id":\#(id),"name":"Movie \#(id)","year":\#(year),"rating":\#(rating),"#
      + #""grossing":\#(id * 7 % 100_000)}"#
    return CacheEntry(
      key: partition + " Movie/\(id)", payload: Data(json.utf8), storedAt: Date(), scope: scope)
  }

  static func run(in folder: URL, read100k: Double) async throws -> Bool {
    let read = try await entityRead(in: folder)
    let assemble = try await listAssemble(in: folder)
    let query = try await localQuery(in: folder)
    let compared = try await localQueryCompare(in: folder)
    let write = try await listWrite(in: folder)
    let met = read <= 2 * read100k && assemble && query && compared && write
    print(
      met
        ? "# entity budgets: met (entity read at most 2x read_100k; list at most 2x, queries 3x, list writes 1.5x the C API)"
        : "# entity budgets missed")
    return met
  }

  /// Rounds of `body` against `baseline`, medians in nanoseconds per operation.
  static func compare(
    rounds: Int, per: Int, _ body: () async throws -> Void, _ baseline: () throws -> Void
  ) async throws -> (Double, Double) {
    var kernel: [Double] = []
    var c: [Double] = []
    for _ in 0..<rounds {
      var start = DispatchTime.now().uptimeNanoseconds
      for _ in 0..<per { try await body() }
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(per))
      start = DispatchTime.now().uptimeNanoseconds
      for _ in 0..<per { try baseline() }
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start) / Double(per))
    }
    return (median(kernel), median(c))
  }

  static func entityRead(in folder: URL) async throws -> Double {
    let file = folder.appendingPathComponent("entities-1m.sqlite")
    let store = try SQLiteCacheStore.open(at: file, budget: .init(maxBytes: 1 << 40))
    let c = try SQLiteC(file.path)
    for start in stride(from: 0, to: 1_000_000, by: 100_000) {
      try c.fill(
        (start..<start + 100_000).map { entity($0, year: 1900 + $0 % 120, rating: $0 % 100) })
    }
    let key = partition + " Movie/543210"
    let (ours, theirs) = try await compare(
      rounds: 15, per: 2_000, { blackHole(try await store.entry(for: key)) },
      { blackHole(try c.payload(for: key)) })
    print("store.entity_read_1m kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    return ours
  }

  static func listAssemble(in folder: URL) async throws -> Bool {
    let file = folder.appendingPathComponent("entities-list.sqlite")
    let store = try SQLiteCacheStore.open(at: file, budget: .init(maxBytes: 1 << 40))
    let c = try SQLiteC(file.path)
    try c.fill((0..<100_000).map { entity($0, year: 1900 + $0 % 120, rating: $0 % 100) })
    let keys = (0..<100).map { partition + " Movie/\($0 * 997)" }
    let (ours, theirs) = try await compare(
      rounds: 15, per: 200, { blackHole(try await store.entries(for: keys)) },
      { blackHole(try c.payloads(for: keys)) })
    print("store.list_assemble_100 kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    return ours <= 2 * theirs
  }

  /// A store at `file` holding 100,000 movies, and the C API's connection to it.
  static func hundredThousand(in file: URL) throws -> (SQLiteCacheStore, SQLiteC) {
    let store = try SQLiteCacheStore.open(at: file, budget: .init(maxBytes: 1 << 40))
    let c = try SQLiteC(file.path)
    try c.fill((0..<100_000).map { entity($0, year: 1900 + $0 % 120, rating: $0 % 100) })
    return (store, c)
  }

  /// The store's expression for `field` (`SQLiteCacheStore.extract`), so its index serves the C
  /// side's query as it serves the store's.
  static func extract(_ field: String) -> String {
    "json_extract(CASE WHEN json_valid(CAST(payload AS TEXT)) THEN CAST(payload AS TEXT) END,"
      + " '$.\(field)')"
  }

  static func localQuery(in folder: URL) async throws -> Bool {
    let (store, c) = try hundredThousand(in: folder.appendingPathComponent("entities-query.sqlite"))
    let query = LocalQuery(
      filters: [.init("year", equals: .integer(2016))], order: [.init("rating", descending: true)],
      limit: 10, summary: "stored movies of 2016, by rating")
    // The store makes its index on the first query; the C side then runs the same SQL on it.
    let first = try await store.query(scope: scope, query)
    let sql =
      "SELECT payload, storedAt FROM cache_entry WHERE scope = ? AND \(extract("year")) = ?"
      + " ORDER BY \(extract("rating")) DESC, key LIMIT 10"
    guard try c.rows(sql, [scope, 2016]) == first.map(\.payload), first.count == 10 else {
      print("kernel-bench: store: the two local queries disagree")
      return false
    }
    let (ours, theirs) = try await compare(
      rounds: 15, per: 200, { blackHole(try await store.query(scope: scope, query)) },
      { blackHole(try c.rows(sql, [scope, 2016])) })
    print("store.local_query_100k kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    return ours <= 3 * theirs
  }

  /// A field compared with another field of the same movie, an order and a limit over 100,000
  /// stored movies (`grossing < id`, by grossing, the first 10), against the same SQL on the
  /// same index through the C API.
  static func localQueryCompare(in folder: URL) async throws -> Bool {
    let (store, c) = try hundredThousand(
      in: folder.appendingPathComponent("entities-compare.sqlite"))
    let query = LocalQuery(
      filters: [.init("grossing", .less, field: "id")], order: [.init("grossing")], limit: 10,
      summary: "stored movies grossing less than their id, by grossing")
    let first = try await store.query(scope: scope, query)
    let sql =
      "SELECT payload, storedAt FROM cache_entry WHERE scope = ?"
      + " AND \(extract("grossing")) < \(extract("id")) ORDER BY \(extract("grossing")), key LIMIT 10"
    guard try c.rows(sql, [scope]) == first.map(\.payload), first.count == 10 else {
      print("kernel-bench: store: the two comparing local queries disagree")
      return false
    }
    let (ours, theirs) = try await compare(
      rounds: 15, per: 200, { blackHole(try await store.query(scope: scope, query)) },
      { blackHole(try c.rows(sql, [scope])) })
    print("store.local_query_compare_100k kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    return ours <= 3 * theirs
  }

  static func listWrite(in folder: URL) async throws -> Bool {
    let answers = (0..<1_000).map { index -> [CacheEntry] in
      let movies = (0..<10).map { entity(index * 10 + $0, year: 1900 + index % 120, rating: $0) }
      return movies + [
        CacheEntry(
          key: partition + " movies/topGrossing/\(index)", payload: Data(), storedAt: Date(),
          validators: CacheValidators(etag: "\"\(index)\""), references: movies.map(\.key))
      ]
    }
    var kernel: [Double] = []
    var c: [Double] = []
    for round in 0..<5 {
      let ours = folder.appendingPathComponent("lists-ours-\(round).sqlite")
      let theirs = folder.appendingPathComponent("lists-theirs-\(round).sqlite")
      let store = try SQLiteCacheStore.open(at: ours)
      _ = try SQLiteCacheStore.open(at: theirs)
      var start = DispatchTime.now().uptimeNanoseconds
      for rows in answers { try await store.store(rows) }
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start))
      let connection = try SQLiteC(theirs.path)
      start = DispatchTime.now().uptimeNanoseconds
      for rows in answers { try connection.store(rows) }
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    print("store.list_write_1k kernel_ns=\(Int(median(kernel))) sqlite_c_ns=\(Int(median(c)))")
    return median(kernel) <= 1.5 * median(c)
  }
}
