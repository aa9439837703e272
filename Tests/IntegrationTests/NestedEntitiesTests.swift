import Api
import Domain
import Foundation
import KernelTesting
import Layers
import SampleApi
import Store
import Synchronization
import Testing

/// A stocktake app's product, which holds its supplier, who holds their contact: each stored once
/// in its own row as well, and read from there.
// snippet: held-entities
private struct Product: Codable, Sendable, Equatable, Identifiable, StoredModel {
  let id: Int
  var name: String
  var count: Int
  var notes: String?  // only the item's answer has it
  var supplier: Supplier

  static let heldEntities = [HeldEntity("supplier", Supplier.self)]
}

private struct Supplier: Codable, Sendable, Equatable, Identifiable, StoredModel {
  let id: Int
  var name: String
  var phone: String?  // only the supplier's own answer has it
  var contact: Person?

  static let heldEntities = [HeldEntity("contact", Person.self)]
}
// end snippet

private struct Person: Codable, Sendable, Equatable, Identifiable {
  let id: Int
  var name: String
}

extension ServiceCall where Value == Product {
  fileprivate static func product(id: Int) -> Self {
    ServiceCall(.init(.get("products/\(id)")), entities: .item(Product.self, id: id))
  }
}

extension ServiceCall where Value == [Product] {
  /// The products, each with fewer fields than its item answer (no notes, no supplier phone);
  /// `whole`: stored as if they had all.
  fileprivate static func products(whole: Bool = false) -> Self {
    ServiceCall(
      .init(.get("products")), entities: .list(Product.self, whole: whole),
      local: LocalQuery(order: [.init("id")], summary: "stored products"))
  }
}

extension ServiceCall where Value == Supplier {
  fileprivate static func supplier(id: Int) -> Self {
    ServiceCall(.init(.get("suppliers/\(id)")), entities: .item(Supplier.self, id: id))
  }
}

extension ServiceCall where Value == Person {
  fileprivate static func person(id: Int) -> Self {
    ServiceCall(.init(.get("people/\(id)")), entities: .item(Person.self, id: id))
  }
}

/// What the server holds, which a test changes.
private final class Stock: Sendable {
  let products: Mutex<[Product]>
  let suppliers: Mutex<[Supplier]>
  let people: Mutex<[Person]>

  init() {
    let ada = Person(id: 3, name: "Ada")
    let acme = Supplier(id: 7, name: "Acme", phone: "555-0100", contact: ada)
    products = Mutex([
      Product(id: 1, name: "bolts", count: 4, notes: "fragile", supplier: acme),
      Product(id: 2, name: "nuts", count: 9, notes: nil, supplier: acme),
    ])
    suppliers = Mutex([acme])
    people = Mutex([ada])
  }
}

/// Entities held in others' JSON (`StoredModel.heldEntities`), over real loopback HTTP, on both stores: a
/// held entity updated by its own call shows in every answer that holds it, offline, to any
/// depth; an answer with fewer fields keeps the stored fields it lacks, unless it is whole.
@Suite struct NestedEntitiesTests {
  enum Kind: String, CaseIterable, Sendable { case memory, sqlite }

  /// `GET products` (without notes and phones), `GET products/{id}`, `GET suppliers/{id}` and
  /// `GET people/{id}`, from `stock`.
  private static func server(_ stock: Stock) async throws -> FixtureServer {
    let server = try await FixtureServer.start(routes: FixtureRoutes())
    let json: @Sendable (any Encodable) -> SampleResponse = { value in
      SampleResponse(status: 200, body: (try? JSONEncoder().encode(value)) ?? Data())
    }
    func item<E: Encodable & Identifiable<Int> & Sendable>(_ all: @escaping @Sendable () -> [E])
      -> @Sendable (SampleRequest) -> SampleResponse
    {
      { request in
        let id = Int(request.parameters["id"] ?? "") ?? 0
        return all().first { $0.id == id }.map(json) ?? SampleResponse(status: 404)
      }
    }
    server.handle("GET", "/api/products/{id}", with: item { stock.products.withLock { $0 } })
    server.handle("GET", "/api/suppliers/{id}", with: item { stock.suppliers.withLock { $0 } })
    server.handle("GET", "/api/people/{id}", with: item { stock.people.withLock { $0 } })
    server.handle("GET", "/api/products") { _ in
      json(
        stock.products.withLock { products in
          products.map { product in
            var listed = product
            listed.notes = nil
            listed.supplier.phone = nil
            return listed
          }
        })
    }
    return server
  }

  private static func stack(_ server: FixtureServer?, _ store: any CacheStore) throws
    -> ServiceStack
  {
    let client = try server.map(ApiClient.loopback)
    return ServiceStack(
      client: client,
      layers: [CachingLayer(store: store, policy: server == nil ? .cacheOnly : .networkFirst)])
  }

  /// `body` with a layered and an offline stack on one store, over a server of `Stock()`.
  private static func withStock(
    _ kind: Kind, _ body: (ServiceStack, ServiceStack, Stock) async throws -> Void
  ) async throws {
    let folder = try TemporaryDirectory("nested")
    defer { folder.remove() }
    let store: any CacheStore =
      kind == .memory
      ? InMemoryStore()
      : try SQLiteCacheStore.open(at: folder.url.appendingPathComponent("cache.sqlite"))
    let stock = Stock()
    let server = try await Self.server(stock)
    do {
      try await body(try Self.stack(server, store), try Self.stack(nil, store), stock)
    } catch {
      await server.stop()
      throw error
    }
    await server.stop()
  }

  @Test(arguments: Kind.allCases)
  func aHeldEntityUpdatedByItsOwnCallShowsInEveryAnswerThatHoldsIt(kind: Kind) async throws {
    try await Self.withStock(kind) { layered, offline, stock in
      _ = try await layered.answer(.product(id: 1))
      _ = try await layered.answer(.products())
      stock.suppliers.withLock { $0[0].name = "Acme Ltd" }
      stock.people.withLock { $0[0].name = "Ada L." }
      #expect(try await layered.answer(.supplier(id: 7)).value.name == "Acme Ltd")
      #expect(try await layered.answer(.person(id: 3)).value.name == "Ada L.")

      // Offline, the item and the list show the supplier's and its contact's own rows: the
      // products' answers never held those names.
      let item = try await offline.answer(.product(id: 1)).value
      #expect(item.supplier.name == "Acme Ltd")
      #expect(item.supplier.contact?.name == "Ada L.")
      let list = try await offline.answer(.products()).value
      #expect(list.map(\.supplier.name) == ["Acme Ltd", "Acme Ltd"])
      #expect(list.map { $0.supplier.contact?.name } == ["Ada L.", "Ada L."])
      // The supplier's phone came only with product 1's item answer, and stays.
      #expect(list.map(\.supplier.phone) == ["555-0100", "555-0100"])
    }
  }

  @Test(arguments: Kind.allCases)
  func aListWithFewerFieldsKeepsTheItemsOthersUnlessItIsWhole(kind: Kind) async throws {
    try await Self.withStock(kind) { layered, offline, stock in
      #expect(try await layered.answer(.product(id: 1)).value.notes == "fragile")
      stock.products.withLock { $0[0].count = 3 }
      _ = try await layered.answer(.products())
      let merged = try await offline.answer(.product(id: 1)).value
      #expect(merged.count == 3)  // the list's field, fresher
      #expect(merged.notes == "fragile")  // the item's field, which the list lacks
      _ = try await layered.answer(.products(whole: true))
      #expect(try await offline.answer(.product(id: 1)).value.notes == nil)
    }
  }

  /// A changes feed's copy of an entity whose edit is pending merges into the api's copy the
  /// edit was made of (what undoing it puts back), field by field when it is a held entity's:
  /// the edit keeps showing, and the fields the feed's copy lacks are kept.
  @Test(arguments: Kind.allCases)
  func aMergedCopyOfAnEditedEntityMergesIntoWhatUndoingPutsBack(kind: Kind) async throws {
    let store: any CacheStore = kind == .memory ? InMemoryStore() : try SQLiteCacheStore.inMemory()
    let json = { (text: String) in Data(text.utf8) }
    try await store.store([
      CacheEntry(
        key: "p Supplier/7", payload: json(#"{"id":7,"name":"Acme (mine)","phone":"555"}"#),
        storedAt: Date(), isPending: true, scope: "p|Supplier",
        original: json(#"{"id":7,"name":"Acme","phone":"555"}"#))
    ])
    try await store.apply(
      StoredChanges(
        entities: [
          CacheEntry(
            key: "p Supplier/7", payload: json(#"{"id":7,"name":"Acme Ltd"}"#), storedAt: Date(),
            scope: "p|Supplier", mergesFields: true)
        ], gone: [], goneAt: Date(),
        token: CacheEntry(key: "p suppliers/changes", payload: json("2"), storedAt: Date())))
    let row = try #require(try await store.entry(for: "p Supplier/7"))
    let decoded = { (data: Data?) in
      try data.map { try JSONDecoder().decode(JSONValue.self, from: $0) }
    }
    #expect(row.isPending)
    #expect(
      try decoded(row.payload)
        == .object(["id": .integer(7), "name": .string("Acme (mine)"), "phone": .string("555")]))
    #expect(
      try decoded(row.original)
        == .object(["id": .integer(7), "name": .string("Acme Ltd"), "phone": .string("555")]))
  }

  /// An item answer is whole: a field it no longer has (an optional the api cleared) goes.
  @Test(arguments: Kind.allCases)
  func anItemAnswerReplacesWhatIsStored(kind: Kind) async throws {
    try await Self.withStock(kind) { layered, offline, stock in
      _ = try await layered.answer(.product(id: 1))
      stock.products.withLock { $0[0].notes = nil }
      _ = try await layered.answer(.product(id: 1))
      #expect(try await offline.answer(.product(id: 1)).value.notes == nil)
    }
  }
}
