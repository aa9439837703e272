import Foundation
import GRDB
import KernelTesting
import Layers
import Testing

@testable import Store

/// A local query runs on one index of its shape (its scope, filters and first order), on a real
/// SQLite file: the filtered rows are found in order, not every entity of the scope read.
@Suite struct LocalQueryIndexTests {
  static let scope = "p|Movie"

  static func movie(_ id: Int) -> CacheEntry {
    let json = #"{"id":\#(id),"year":\#(1900 + id % 120),"rating":\#(id % 100)}"#
    return CacheEntry(
      key: "p Movie/\(id)", payload: Data(json.utf8), storedAt: Date(), scope: scope)
  }

  @Test func aFilteredOrderedQueryRunsOnOneIndexOfItsShape() async throws {
    let folder = try TemporaryDirectory("local-query-index")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(at: folder.cache)
    try await store.store((0..<2_400).map(Self.movie))
    let byRating = LocalQuery(
      order: [.init("rating", descending: true)], limit: 10, summary: "by rating")
    let ofAYearByRating = LocalQuery(
      filters: [.init("year", equals: .integer(2016))], order: [.init("rating", descending: true)],
      limit: 10, summary: "of 2016 by rating")
    // An index of the order alone exists too, as another query made it: SQLite must still
    // take the one of this query's shape.
    _ = try await store.query(scope: Self.scope, byRating)
    let answer = try await store.query(scope: Self.scope, ofAYearByRating)

    let expected = (0..<2_400).filter { 1900 + $0 % 120 == 2016 }
      .sorted { a, b in a % 100 != b % 100 ? a % 100 > b % 100 : "p Movie/\(a)" < "p Movie/\(b)" }
      .prefix(10)
    #expect(answer.map(\.key) == expected.map { "p Movie/\($0)" })
    let (sql, arguments) = try #require(SQLiteCacheStore.select(scope: Self.scope, ofAYearByRating))
    let plan = try await DatabaseQueue(path: folder.cache.path).read { db in
      try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
        .map { $0["detail"] as String? ?? "" }
    }
    #expect(plan.contains { $0.contains("USING INDEX cache_entity_json_year,rating") }, "\(plan)")
    #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
  }
}
