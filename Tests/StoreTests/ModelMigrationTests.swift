import Domain
import Foundation
import KernelTesting
import Layers
import Store
import Testing

/// A product as the app's second version keeps it: `reorderLevel` is new.
// snippet: stored-model
private struct Product: Codable, Sendable, Identifiable, Equatable, StoredModel {
  let id: Int
  let name: String
  let reorderLevel: Int  // new in version 2

  static let modelVersion = 2
  static func migrate(_ stored: inout JSONValue, from version: Int) throws {
    // Version 1 had no reorder level: 5 for every product stored before.
    guard version == 1, case .object(var fields) = stored else { return }
    fields["reorderLevel"] = .integer(5)
    stored = .object(fields)
  }
}
// end snippet

/// A product whose app says its stored form is now version 2, and declares no migration.
private struct Widget: Codable, Sendable, Identifiable, Equatable, StoredModel {
  let id: Int
  let name: String
  let reorderLevel: Int
  static let modelVersion = 2
}

/// The same product, declared by an app that added the field with no migration.
private struct Gadget: Codable, Sendable, Identifiable, Equatable {
  let id: Int
  let name: String
  let reorderLevel: Int
}

/// An app update that changes a stored type keeps what is stored, on both stores: rows of an
/// older version are migrated by the type's declared migration when read (item, list, local
/// query); without one, a list answers with the rows that read and says how many did not.
@Suite struct ModelMigrationTests {
  enum Kind: String, CaseIterable, Sendable { case memory, sqlite }

  static func store(_ kind: Kind) throws -> any CacheStore {
    kind == .memory ? InMemoryStore() : try SQLiteCacheStore.inMemory()
  }

  /// Rows as the app's first version stored them: no `reorderLevel`, version 1, held by a list.
  static func firstVersion(_ type: String, in store: any CacheStore) async throws {
    let rows = (1...3).map { id in
      CacheEntry(
        key: "p \(type)/\(id)", payload: Data(#"{"id":\#(id),"name":"item \#(id)"}"#.utf8),
        storedAt: Date(), scope: "p|\(type)")
    }
    let list = CacheEntry(
      key: "p \(type.lowercased())s", payload: Data(), storedAt: Date(),
      references: rows.map(\.key))
    try await store.store(rows + [list])
  }

  static func offline(
    _ store: any CacheStore, warn: @escaping @Sendable (String) -> Void = { _ in }
  )
    -> ServiceStack
  {
    ServiceStack(
      client: nil,
      layers: [CachingLayer(store: store, policy: .cacheOnly, partition: "p", warn: warn)])
  }

  @Test(arguments: Kind.allCases)
  func rowsOfAnOlderVersionAreMigratedWhenRead(kind: Kind) async throws {
    let store = try Self.store(kind)
    try await Self.firstVersion("Product", in: store)
    let offline = Self.offline(store)
    let item = ServiceCall<Product>(
      name: "product", entity: .item(Product.self, id: 2), summary: "product 2")
    #expect(try await offline.answer(item).value == Product(id: 2, name: "item 2", reorderLevel: 5))
    let list = ServiceCall<[Product]>(
      name: "products", key: "products", summary: "the products", entities: .list(Product.self))
    #expect(try await offline.answer(list).value.map(\.reorderLevel) == [5, 5, 5])
    let local = ServiceCall<[Product]>(
      name: "stored", key: "products/stored", summary: "the stored products",
      entities: .list(Product.self),
      local: LocalQuery(order: [.init("id", descending: true)], summary: "stored products"))
    #expect(try await offline.answer(local).value.map(\.id) == [3, 2, 1])
  }

  /// The first version's rows of `type` and a fourth row stored at `version`, all in its list;
  /// what a cache-only list of them answers, and what it said.
  static func listOfOlderRowsAndOneNew<T: Codable & Sendable & Identifiable>(
    _ type: T.Type, version: Int, in kind: Kind
  ) async throws -> (ids: [T.ID], said: [String]) {
    let store = try Self.store(kind)
    let name = "\(T.self)"
    try await Self.firstVersion(name, in: store)
    try await store.store([
      CacheEntry(
        key: "p \(name)/4", payload: Data(#"{"id":4,"name":"item 4","reorderLevel":1}"#.utf8),
        storedAt: Date(), scope: "p|\(name)", modelVersion: version)
    ])
    var list = try #require(try await store.entry(for: "p \(name.lowercased())s"))
    list.references?.append("p \(name)/4")
    try await store.store([list])
    let said = PrintedLines()
    let call = ServiceCall<[T]>(
      name: "list", key: "\(name.lowercased())s", summary: "the \(name.lowercased())s",
      entities: .list(T.self))
    let ids = try await Self.offline(store) { said.print($0) }.answer(call).value.map(\.id)
    return (ids, said.all)
  }

  @Test(arguments: Kind.allCases)
  func withoutAMigrationAListAnswersWithTheRowsThatRead(kind: Kind) async throws {
    let (ids, said) = try await Self.listOfOlderRowsAndOneNew(Gadget.self, version: 1, in: kind)
    #expect(ids == [4])
    #expect(
      said == [
        "3 stored Gadget entities do not read as Gadget any more and were left out of the gadgets."
      ])
  }

  /// A type that declares a new version and no migration from the old one: its rows of the old
  /// version are not read as the new (the default migration refuses them), and a list answers
  /// with the rows of the new version, saying how many it left out.
  @Test(arguments: Kind.allCases)
  func aNewVersionWithoutItsMigrationLeavesTheOlderRowsOut(kind: Kind) async throws {
    let (ids, said) = try await Self.listOfOlderRowsAndOneNew(Widget.self, version: 2, in: kind)
    #expect(ids == [4])
    #expect(
      said == [
        "3 stored Widget entities do not read as Widget any more and were left out of the widgets."
      ])
    // It declares no migration, so `cache stats` and `doctor` count those rows as older.
    #expect(!EntityShape<[Widget]>.list(Widget.self).migrates)
    #expect(EntityShape<[Product]>.list(Product.self).migrates)
  }

  /// `doctor`'s count of damaged rows: rows of a version the type reads that still do not read
  /// as it. Migrated rows read; rows of a version with no migration are older, not damaged; a
  /// field added with no new version makes every stored row damaged; so does bytes that are not
  /// JSON. The rows are found by the scopes the store's statistics name.
  @Test(arguments: Kind.allCases)
  func damagedRowsAreThoseOfAVersionTheTypeReadsThatDoNotRead(kind: Kind) async throws {
    let store = try Self.store(kind)
    for type in ["Product", "Widget", "Gadget"] { try await Self.firstVersion(type, in: store) }
    var product = try #require(try await store.entry(for: "p Product/3"))
    product.payload = Data("not json".utf8)
    try await store.store(product)
    let maintenance = try #require(store as? any CacheMaintenance)
    let scopes = try await maintenance.statistics().entityScopes
    #expect(scopes == ["p|Product", "p|Widget", "p|Gadget"])
    func damaged<E: Identifiable & Codable & Sendable>(_ type: E.Type) async throws -> Int {
      let rows = try await store.query(scope: "p|\(E.self)", LocalQuery(summary: "all"))
      #expect(rows.count == 3)
      return EntityShape<[E]>.list(E.self).damaged(rows)
    }
    #expect(try await damaged(Product.self) == 1)
    #expect(try await damaged(Widget.self) == 0)
    #expect(try await damaged(Gadget.self) == 3)
  }
}
