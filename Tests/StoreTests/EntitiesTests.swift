import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Store
import Testing

/// The store as a source of truth, on both stores alike: an entity shared by two lists and an
/// item call is one row, so a fresher copy shows in all three; a list one of whose entities is
/// gone is a miss, never a list with holes; partitions keep entities apart too.
@Suite struct EntitiesTests {
  enum Kind: String, CaseIterable, Sendable { case memory, sqlite }

  static func store(_ kind: Kind) throws -> any CacheStore {
    kind == .memory ? InMemoryStore() : try SQLiteCacheStore.inMemory()
  }

  static func movies(rating two: Double) throws -> [Movie] {
    [
      try Movie.fixture(1, "One", grossing: 30, rating: 10),
      try Movie.fixture(2, "Two", grossing: 20, rating: two),
      try Movie.fixture(3, "Three", grossing: 10, rating: 30),
    ]
  }

  static func layered(
    _ store: any CacheStore, _ api: ScriptedMovieApi?, partition: String = "p",
    policy: CachePolicy = .networkFirst
  ) throws -> MovieStack {
    try MovieStack(
      api: api, layers: [CachingLayer(store: store, policy: policy, partition: partition)])
  }

  @Test(arguments: Kind.allCases)
  func anEntitySharedByTwoListsAndAnItemIsOneRow(kind: Kind) async throws {
    let store = try Self.store(kind)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let online = try Self.layered(store, api)
    _ = try await online.topGrossingMovies(year: 2016)
    _ = try await online.topRatedMovies(year: 2016)
    // A fresher copy of movie 2, from its item call alone.
    api.answer(try Self.movies(rating: 99))
    #expect(try await online.movie(id: 2).rating == 99)

    let offline = try Self.layered(store, nil, policy: .cacheOnly)
    let grossing = try await offline.topGrossingMovies(year: 2016)
    let rated = try await offline.topRatedMovies(year: 2016)
    #expect(grossing.map(\.id) == [1, 2, 3])  // each list keeps its own order
    #expect(rated.map(\.id) == [3, 2, 1])
    #expect(grossing.first { $0.id == 2 }?.rating == 99)
    #expect(rated.first { $0.id == 2 }?.rating == 99)
    #expect(try await offline.movie(id: 2).rating == 99)
    #expect(api.calls == 3)
  }

  /// An item the api says does not exist (404, 410) leaves the store: every stored list that
  /// held it shrinks, and where a stored copy would answer, "not found" does — offline, and
  /// online with the api unreachable. An answer that holds it again stores it anew.
  @Test(arguments: Kind.allCases)
  func anItemTheApiSaysIsGoneLeavesEveryStoredList(kind: Kind) async throws {
    let store = try Self.store(kind)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let online = try Self.layered(store, api)
    _ = try await online.topGrossingMovies(year: 2016)
    _ = try await online.topRatedMovies(year: 2016)
    api.fail(.notFound)
    let notFound = await #expect(throws: (any Error).self) { try await online.movie(id: 2) }
    #expect(notFound.flatMap { ServiceFailure.of($0) } == .notFound)

    let offline = try Self.layered(store, nil, policy: .cacheOnly)
    #expect(try await offline.topGrossingMovies(year: 2016).map(\.id) == [1, 3])
    #expect(try await offline.topRatedMovies(year: 2016).map(\.id) == [3, 1])
    let gone = await #expect(throws: LayerError.self) { try await offline.movie(id: 2) }
    #expect(gone.flatMap { ServiceFailure.of($0) } == .notFound)
    api.fail(.unreachable)
    let stillGone = await #expect(throws: LayerError.self) { try await online.movie(id: 2) }
    #expect(
      stillGone.map { if case .gone(what: "movie 2", _) = $0 { true } else { false } } == true)

    api.answer(try Self.movies(rating: 20))
    _ = try await online.topGrossingMovies(year: 2016)
    #expect(try await offline.movie(id: 2).id == 2)
    #expect(try await offline.topGrossingMovies(year: 2016).map(\.id) == [1, 2, 3])
  }

  /// An entity whose edit is pending is never removed by a 404: its write is sent, and its own
  /// answer decides.
  @Test(arguments: Kind.allCases)
  func anEntityWithAPendingEditStaysWhenTheApiSaysItIsGone(kind: Kind) async throws {
    let store = try Self.store(kind)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    _ = try await Self.layered(store, api).topGrossingMovies(year: 2016)
    var edited = try #require(try await store.entry(for: "p Movie/2"))
    (edited.isPending, edited.original) = (true, edited.payload)
    try await store.store([edited])
    #expect(try await store.removeEntity("p Movie/2", goneAt: Date()) == false)
    let offline = try Self.layered(store, nil, policy: .cacheOnly)
    #expect(try await offline.topGrossingMovies(year: 2016).map(\.id) == [1, 2, 3])
    #expect(try await offline.movie(id: 2).id == 2)
  }

  /// Clearing the cache, all of it or a partition's, keeps an entity whose edit is pending: the
  /// edit is the user's until its write is settled, as the budget and a deletion keep it.
  @Test(arguments: Kind.allCases)
  func clearingKeepsAnEntityWhoseEditIsPending(kind: Kind) async throws {
    let store = try Self.store(kind)
    let maintained = try #require(store as? any CacheMaintenance)
    _ = try await Self.layered(store, ScriptedMovieApi(try Self.movies(rating: 20)))
      .topGrossingMovies(year: 2016)
    var edited = try #require(try await store.entry(for: "p Movie/2"))
    (edited.isPending, edited.original, edited.payload) = (true, edited.payload, Data("{}".utf8))
    try await store.store([edited])
    #expect(try await maintained.clear(origin: "p") == 3)  // the list, movies 1 and 3
    let kept = try await store.entry(for: "p Movie/2")
    #expect(kept?.isPending == true && kept?.payload == Data("{}".utf8))
    #expect(try await maintained.clear() == 0)
    #expect(try await maintained.statistics().entries == 1)
  }

  @Test(arguments: Kind.allCases)
  func aListWhoseEntityIsGoneIsAMissNeverAListWithHoles(kind: Kind) async throws {
    let store = try Self.store(kind)
    _ = try await Self.layered(store, ScriptedMovieApi(try Self.movies(rating: 20)))
      .topGrossingMovies(year: 2016)
    try await store.remove("p Movie/2")
    let offline = try Self.layered(store, nil, policy: .cacheOnly)
    // The grossing list is not answered with two of its three movies: its local query
    // answers with what is stored, said to be local.
    let answered = try await offline.stack.answer(.topGrossingMovies(year: 2016))
    #expect(answered.value.map(\.id) == [1, 3])
    #expect(answered.origin == .local)
    await #expect(throws: LayerError.miss(what: "movie 2")) { try await offline.movie(id: 2) }
  }

  @Test(arguments: Kind.allCases)
  func partitionsKeepEntitiesApart(kind: Kind) async throws {
    let store = try Self.store(kind)
    _ = try await Self.layered(store, ScriptedMovieApi(try Self.movies(rating: 20)))
      .topGrossingMovies(year: 2016)
    let elsewhere = try Self.layered(store, nil, partition: "q", policy: .cacheOnly)
    await #expect(throws: LayerError.miss(what: "movie 2")) { try await elsewhere.movie(id: 2) }
    await #expect(throws: LayerError.miss(what: "the top-rated movies of 2016")) {
      try await elsewhere.topRatedMovies(year: 2016)
    }
    #expect(try await Self.layered(store, nil, policy: .cacheOnly).movie(id: 2).name == "Two")
  }

  /// A local query's field that is not a key path never reaches SQL.
  @Test(arguments: Kind.allCases)
  func aFieldThatIsNotAKeyPathIsRefused(kind: Kind) async throws {
    let store = try Self.store(kind)
    let query = LocalQuery(
      filters: [.init("year') OR 1=1 --", equals: .integer(1))], summary: "nothing")
    await #expect(throws: LayerError.notAField("year') OR 1=1 --")) {
      try await store.query(scope: "p|Movie", query)
    }
  }

  /// A feed's page is applied only over the token it was asked with, on both stores: a page
  /// asked from the start after another sync stored a token writes nothing and says so.
  @Test(arguments: Kind.allCases)
  func aFeedPageIsAppliedOnlyOverTheTokenItWasAskedWith(kind: Kind) async throws {
    let store = try Self.store(kind)
    let page = { (title: String, token: String, asked: String?) in
      StoredChanges(
        entities: [
          CacheEntry(
            key: "p Movie/1", payload: Data(#"{"id":1,"name":"\#(title)"}"#.utf8),
            storedAt: Date(), scope: "p|Movie")
        ], gone: [], goneAt: Date(),
        token: CacheEntry(key: "p movies/changes", payload: Data(token.utf8), storedAt: Date()),
        asked: asked)
    }
    #expect(try await store.apply(page("new", "2", nil)))
    #expect(try await !store.apply(page("old", "1", nil)))
    #expect(try await !store.apply(page("old", "1", "1")))
    let row = try await store.entry(for: "p Movie/1")
    #expect(row.map { String(decoding: $0.payload, as: UTF8.self) } == #"{"id":1,"name":"new"}"#)
    #expect(try await store.apply(page("newer", "3", "2")))
    let token = try await store.entry(for: "p movies/changes")
    #expect(token.map { String(decoding: $0.payload, as: UTF8.self) } == "3")
  }

  /// Whether every key a list holds is stored, on both stores: a row counts, a tombstone too (it
  /// is a row), a key with none makes the list not whole; a list of no keys is whole, and keys
  /// with quotes and backslashes are looked up as they are.
  @Test(arguments: Kind.allCases)
  func aListIsWholeWhenEveryKeyItHoldsIsStored(kind: Kind) async throws {
    let store = try Self.store(kind)
    let odd = #"p "quoted"\key"#
    let at = Date(timeIntervalSince1970: 1_000)
    func list(_ key: String, _ references: [String]) -> CacheEntry {
      CacheEntry(key: key, payload: Data(), storedAt: at, references: references)
    }
    try await store.store([
      CacheEntry(key: "p Movie/1", payload: Data("{}".utf8), storedAt: Date(), scope: "p|Movie"),
      CacheEntry(key: "p Movie/2", payload: Data(), storedAt: Date(), isGone: true),
      CacheEntry(key: odd, payload: Data("{}".utf8), storedAt: Date()),
      list("whole", ["p Movie/1", "p Movie/2", odd, "p Movie/1"]), list("empty", []),
      list("holed", ["p Movie/1", "p Movie/3"]), list("odd missing", [#"p "q\"#]),
    ])
    #expect(try await store.storedAtIfWhole("whole") == at)
    #expect(try await store.storedAtIfWhole("empty") == at)
    #expect(try await store.storedAtIfWhole("holed") == nil)
    #expect(try await store.storedAtIfWhole("odd missing") == nil)
    #expect(try await store.storedAtIfWhole("p Movie/1") == nil)  // no list
    #expect(try await store.storedAtIfWhole("nowhere") == nil)
  }
}
