import Domain
import Foundation
import Layers
import Testing

/// How a stored copy ends when one write's edit of it is settled (`CacheEntry.settled`), on
/// the in-memory twin as on SQLite: what the writes still kept make of the api's copy.
struct EditSettlementTests {
  private let api = Data(#"{"id": 3, "name": "A", "rating": 65}"#.utf8)
  private let rated = JSONValue.object(["rating": .integer(80)])
  private let renamed = JSONValue.object(["name": .string("B")])

  private func edited() -> CacheEntry {
    CacheEntry(
      key: "Movie/3", payload: Data(#"{"id": 3, "name": "B", "rating": 80}"#.utf8),
      storedAt: Date(timeIntervalSince1970: 0), isPending: true, scope: "|Movie", original: api)
  }

  private func value(_ data: Data?) throws -> JSONValue? {
    try data.map { try JSONDecoder().decode(JSONValue.self, from: $0) }
  }

  @Test func undoingOneOfTwoEditsShowsTheOtherOfTheApisCopy() async throws {
    let store = InMemoryStore()
    try await store.store(edited())
    try await store.settleEdit(
      of: "Movie/3", EditSettlement(taken: false, change: rated, remaining: [renamed]))
    let entry = try #require(try await store.entry(for: "Movie/3"))
    #expect(try value(entry.payload) == value(Data(#"{"id": 3, "name": "B", "rating": 65}"#.utf8)))
    #expect(entry.isPending && entry.original == api)
    #expect(try await store.pendingKeys() == ["Movie/3"])
  }

  @Test func theLastEditUndonePutsTheApisCopyBack() async throws {
    let store = InMemoryStore()
    try await store.store(edited())
    try await store.settleEdit(of: "Movie/3", EditSettlement(taken: false, change: rated))
    let entry = try #require(try await store.entry(for: "Movie/3"))
    #expect(entry.payload == api && !entry.isPending && entry.original == nil)
    #expect(try await store.pendingKeys().isEmpty)
  }

  @Test func anEditTheApiTookJoinsTheApisCopyUnderTheOthers() throws {
    let settled = try #require(
      edited().settled(EditSettlement(taken: true, change: rated, remaining: [renamed])))
    #expect(settled.isPending && settled.isStale)
    #expect(settled.payload == edited().payload)
    #expect(
      try value(settled.original) == value(Data(#"{"id": 3, "name": "A", "rating": 80}"#.utf8)))
  }
}
