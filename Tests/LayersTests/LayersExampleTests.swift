import Api
import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Testing

/// The README's layer stack, verbatim between the snippet markers: logging outside, dedupe,
/// then the cache over the base.
@Suite struct LayersExampleTests {
  @Test func theReadmeStackLogsSharesAndCaches() async throws {
    let output = PrintedLines()
    @Sendable func print(_ text: String) { output.print(text) }
    let api = try await LoopbackApi.start(routes: .sampleMovies())
    let cache = InMemoryStore()
    // snippet: layers
    let movies = ServiceStack(
      client: api.client,
      layers: [
        LoggingLayer(log: { print($0) }),
        DedupeLayer(),  // concurrent identical calls share one
        // or cacheOnly, networkOnly, cacheFirst(maxAge:), cacheThenNetwork, staleWhileRevalidate(maxAge:)
        CachingLayer(store: cache, policy: .networkFirst),
      ])
    // end snippet
    #expect(try await movies.answer(.movie(id: 3)).value.name == "Captain America: Civil War")
    await api.server.stop()
    #expect(try await movies.answer(.movie(id: 3)).value.name == "Captain America: Civil War")
    #expect(output.all.count == 2)
    #expect(output.all.first?.hasPrefix("movie Movie/3: from network in ") == true)
    #expect(output.all.last?.hasPrefix("movie Movie/3: from cache in ") == true)
  }
}

extension LayersExampleTests {
  /// The README's source of truth, verbatim: a list stored once answers the item call of a
  /// movie it held and a list never fetched, offline.
  @Test func theReadmeSourceOfTruthAnswersFromStoredMovies() async throws {
    let output = PrintedLines()
    @Sendable func print(_ text: String) { output.print(text) }
    let cache = InMemoryStore()
    try await withLoopbackApi(routes: .sampleMovies()) { api in
      // snippet: source-of-truth
      // Each movie of a list is stored once; the list keeps their ids.
      let layered = ServiceStack(
        client: api.client, layers: [CachingLayer(store: cache, policy: .networkFirst)])
      _ = try await layered.answer(.topGrossingMovies(year: 2016))
      // end snippet
    }
    // snippet: source-of-truth
    let offline = ServiceStack(
      client: nil, layers: [CachingLayer(store: cache, policy: .cacheOnly)])
    // An item call names its entity: movie 3 is answered from the row the list stored.
    let movie = try await offline.answer(.movie(id: 3))
    print("\(movie.value.name), \(movie.origin)")  // Captain America: Civil War, cache
    // Never fetched: its local query runs over the stored movies of 2016, by rating.
    let rated = try await offline.answer(.topRatedMovies(year: 2016))
    print(rated.value.prefix(2).map(\.name).joined(separator: ", "))  // Zootopia, Finding Dory
    print(rated.origin.rawValue)  // local
    // end snippet
    #expect(output.all == ["Captain America: Civil War, cache", "Zootopia, Finding Dory", "local"])
    // snippet: local-compare
    // A question the api has no route for: a call with no request, answered from the store.
    let hits = ServiceCall<[Movie]>(
      name: "hits", key: "movies/hits", summary: "stored hits", entities: .list(Movie.self),
      local: LocalQuery(
        filters: [
          .init(\Movie.year, equals: .integer(2016)),
          .init(\Movie.rating, .greaterOrEqual, .number(7.5)), .init(\Movie.name, .contains("a")),
        ],
        order: [.init(\Movie.grossing, descending: true)], limit: 3,
        summary: "stored hits of 2016"))
    print(try await offline.answer(hits).value.map(\.name).joined(separator: ", "))
    // Rogue One: A Star Wars Story, Captain America: Civil War, Deadpool
    // end snippet
    #expect(output.all.last == "Rogue One: A Star Wars Story, Captain America: Civil War, Deadpool")
  }
}
