import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import Testing

@testable import Store

/// Local queries that compare, on a real SQLite file and on the in-memory twin alike: a field
/// against a value or another field, one of several values, a text prefix or part, null; the
/// limit after the filters; run in SQL on the index of the query's shape.
@Suite struct LocalQueryCompareTests {
  static let scope = "p|Product"

  /// Product `id`: its category, count, reorder level and name; every seventh has no name,
  /// every eleventh's count is text.
  static func product(_ id: Int) -> CacheEntry {
    let name =
      id % 7 == 0 ? "null" : "\"\(["bolt", "nut", "washer", "bolt cutter"][id % 4]) \(id)\""
    let count = id % 11 == 0 ? "\"\(id % 50)\"" : "\(id % 50)"
    let json =
      #"{"id":\#(id),"category":\#(id % 5),"count":\#(count),"reorderLevel":\#((id * 7) % 40),"#
      + #""name":\#(name)}"#
    return CacheEntry(
      key: "p Product/\(id)", payload: Data(json.utf8), storedAt: Date(), scope: scope)
  }

  /// "Products of category 3 whose count is below their reorder level, by count, first 10",
  /// in SQL, on the index of its shape: never by decoding every product.
  @Test func aFieldComparedWithAnotherRunsInSQLOnItsIndex() async throws {
    let folder = try TemporaryDirectory("local-query-compare")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(at: folder.cache)
    try await store.store((1...3_000).map(Self.product))
    let reorder = LocalQuery(
      filters: [
        .init("category", equals: .integer(3)), .init("count", .less, field: "reorderLevel"),
      ],
      order: [.init("count")], limit: 10, summary: "products to reorder")
    let answer = try await store.query(scope: Self.scope, reorder).map(\.key)

    let expected = (1...3_000).filter { $0 % 5 == 3 && $0 % 11 != 0 && $0 % 50 < ($0 * 7) % 40 }
      .sorted { a, b in a % 50 != b % 50 ? a % 50 < b % 50 : "p Product/\(a)" < "p Product/\(b)" }
      .prefix(10).map { "p Product/\($0)" }
    #expect(answer.count == 10)
    #expect(answer == Array(expected))
    let (sql, arguments) = try #require(SQLiteCacheStore.select(scope: Self.scope, reorder))
    let plan = try await DatabaseQueue(path: folder.cache.path).read { db in
      try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments)
        .map { $0["detail"] as String? ?? "" }
    }
    #expect(
      plan.contains { $0.contains("USING INDEX cache_entity_json_category,count") }, "\(plan)")
    #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(plan)")
  }

  /// Each kind of filter selects the same products, in the same order, from SQLite and from
  /// its twin; the limit applies after them.
  @Test(arguments: [
    LocalQuery.Filter("count", .greaterOrEqual, .integer(45)),
    LocalQuery.Filter("count", .notEqual, .integer(3)),
    LocalQuery.Filter("count", .lessOrEqual, .number(2.5)),
    LocalQuery.Filter("count", .greater, field: "reorderLevel"),
    LocalQuery.Filter("count", .equal, .string("22")),
    LocalQuery.Filter("name", .greater, .string("nut")),
    LocalQuery.Filter("category", .oneOf([.integer(1), .integer(4), .string("x")])),
    LocalQuery.Filter("name", .prefix("bolt")),
    LocalQuery.Filter("name", .contains("cut")),
    LocalQuery.Filter("name", .isNull),
    LocalQuery.Filter("count", .less, .null),
  ])
  func eachFilterSelectsTheSameOnBothStores(filter: LocalQuery.Filter) async throws {
    let products = (1...300).map(Self.product)
    let twin = InMemoryStore()
    let sqlite = try SQLiteCacheStore.inMemory()
    try await twin.store(products)
    try await sqlite.store(products)
    let query = LocalQuery(
      filters: [filter], order: [.init("id", descending: true)], limit: 25, summary: "some")
    let fromTwin = try await twin.query(scope: Self.scope, query).map(\.key)
    let fromSQLite = try await sqlite.query(scope: Self.scope, query).map(\.key)
    #expect(fromTwin == fromSQLite)
    // Every filter but the null comparison selects some, and the limit came after it.
    if filter.test != .value(.less, .null) {
      #expect(!fromTwin.isEmpty)
      let all = LocalQuery(
        filters: [filter], order: [.init("id", descending: true)], summary: "all")
      let every = try await twin.query(scope: Self.scope, all).map(\.key)
      #expect(Array(every.prefix(25)) == fromTwin)
    } else {
      #expect(fromTwin.isEmpty)
    }
  }
}

/// A stocktake product, with a list of the bins it sits in and a date.
private struct Product: Codable, Sendable, Identifiable {
  struct Bin: Codable, Sendable { let aisle: String }
  let id: Int
  let category: Int
  let count: Int
  let reorderLevel: Int
  let name: String?
  let bins: [Bin]
  let countedAt: Date
  let discontinued: Bool
  let onOrder: Bool?
}

/// An item whose JSON names its fields in snake case, by its coding keys.
private struct Item: Codable, Sendable, Identifiable {
  let id: Int
  let reorderLevel: Int
  let countedAt: Date?

  enum CodingKeys: String, CodingKey {
    case id
    case reorderLevel = "reorder_level"
    case countedAt = "counted_at"
  }
}

extension LocalQueryCompareTests {
  /// A local query's fields are checked against the entity type's own (its coding keys, to any
  /// depth): a misspelled one is refused as the app's mistake (a configuration failure, 78)
  /// before the store or the api is asked — never an empty answer.
  @Test func aMisspelledFieldIsRefusedBeforeAnythingIsAsked() async throws {
    let shape = EntityShape<[Product]>.list(Product.self)
    let good = LocalQuery(
      filters: [
        .init("count", .less, field: "reorderLevel"), .init("bins.0.aisle", .prefix("A")),
        .init("name", .isNull),
      ],
      order: [.init("countedAt")], summary: "products to reorder")
    try shape.check(good)
    let misspelled = LocalQuery(
      filters: [.init("count", .less, field: "reorderLevle")], summary: "products to reorder")
    #expect(throws: LayerError.self) { try shape.check(misspelled) }
    #expect(throws: LayerError.self) {
      try shape.check(LocalQuery(order: [.init("bins.0.shelf")], summary: "by shelf"))
    }

    let store = InMemoryStore()
    try await store.store((1...30).map(Self.product))
    let offline = ServiceStack(
      client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly, partition: "p")])
    let call = ServiceCall<[Product]>(
      name: "reorder", key: "products/reorder", summary: "the products to reorder",
      entities: shape, local: misspelled)
    let refused = await #expect(throws: LayerError.self) { try await offline.answer(call) }
    #expect(ServiceFailure.of(try #require(refused)) == .configuration)
    #expect(
      refused?.description
        == "The local query of products to reorder names the field reorderLevle, which Product"
        + " does not have; its fields are bins, category, count, countedAt, discontinued, id,"
        + " name, onOrder, reorderLevel.")
  }

  /// A field named by a key path is the one its coding key names, so a misspelling does not
  /// compile: numbers, text, dates, flags and optionals alike; a list names no field, and is
  /// refused when the query runs.
  @Test func aKeyPathNamesTheFieldItsCodingKeySays() throws {
    #expect(LocalQuery.Filter(\Product.reorderLevel, .less, .integer(3)).field == "reorderLevel")
    #expect(LocalQuery.Filter(\Product.name, .isNull).field == "name")
    #expect(LocalQuery.Order(\Product.countedAt).field == "countedAt")
    #expect(
      LocalQuery.Filter(\Product.discontinued, equals: .boolean(true)).field == "discontinued")
    #expect(LocalQuery.Filter(\Product.onOrder, .isNull).field == "onOrder")
    #expect(LocalQuery.Filter(\Item.reorderLevel, equals: .integer(1)).field == "reorder_level")
    #expect(LocalQuery.Order(\Item.countedAt, descending: true).field == "counted_at")
    let reorder = LocalQuery.Filter(\Product.count, .less, field: \.reorderLevel)
    #expect(reorder.test == .field(.less, "reorderLevel"))
    let bins = LocalQuery(filters: [.init(\Product.bins, .isNull)], summary: "binless")
    #expect(throws: LayerError.self) { try EntityShape<[Product]>.list(Product.self).check(bins) }
  }
}

/// Two types of one name, their fields spelled differently in JSON.
private enum Snake {
  struct Row: Codable {
    let reorderLevel: Int
    enum CodingKeys: String, CodingKey { case reorderLevel = "reorder_level" }
  }
}

private enum Camel {
  struct Row: Codable { let reorderLevel: Int }
}

extension LocalQueryCompareTests {
  /// A key path's field is its own root type's, never that of another type of the same name.
  @Test func twoTypesOfOneNameKeepTheirOwnFields() {
    #expect(LocalQuery.Order(\Snake.Row.reorderLevel).field == "reorder_level")
    #expect(LocalQuery.Order(\Camel.Row.reorderLevel).field == "reorderLevel")
  }
}
