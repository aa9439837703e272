import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Testing

/// The README's layer stack, verbatim between the snippet markers: logging outside, dedupe,
/// then the cache over the base.
@Suite(.timeLimit(.minutes(1))) struct LayersExampleTests {
  @Test func theReadmeStackLogsSharesAndCaches() async throws {
    let output = PrintedLines()
    @Sendable func print(_ text: String) { output.print(text) }
    let apiMovies = ScriptedMovieService([try Movie.fixture(1, "Finding Dory")])
    let cache = InMemoryCacheStore()
    // snippet: layers
    let movies = LayeredMovieService(
      base: .plain(apiMovies),
      layers: [
        LoggingLayer(log: { print($0) }),
        DedupeLayer(),  // concurrent identical calls share one
        // or cacheOnly, networkOnly, cacheFirst(maxAge:), cacheThenNetwork, staleWhileRevalidate(maxAge:)
        CachingLayer(store: cache, policy: .networkFirst),
      ])
    // end snippet
    #expect(try await movies.movie(id: 1).name == "Finding Dory")
    apiMovies.fail(.unreachable)
    #expect(try await movies.movie(id: 1).name == "Finding Dory")
    #expect(output.all.count == 2)
    #expect(output.all.first?.hasPrefix("movie Movie/1: from network in ") == true)
    #expect(output.all.last?.hasPrefix("movie Movie/1: from cache in ") == true)
  }
}

extension LayersExampleTests {
  /// The README's source of truth, verbatim: a list stored once answers the item call of a
  /// movie it held and a list never fetched, offline.
  @Test func theReadmeSourceOfTruthAnswersFromStoredMovies() async throws {
    let output = PrintedLines()
    @Sendable func print(_ text: String) { output.print(text) }
    let apiMovies = ScriptedMovieService([
      try Movie.fixture(1, "Finding Dory", rating: 74),
      try Movie.fixture(3, "Zootopia", rating: 80),
    ])
    let cache = InMemoryCacheStore()
    // snippet: source-of-truth
    // Each movie of a list is stored once; the list keeps their ids.
    let layered = LayeredMovieService(
      base: .plain(apiMovies), layers: [CachingLayer(store: cache, policy: .networkFirst)])
    _ = try await layered.topGrossingMovies(year: 2016)

    let offline = LayeredMovieService(
      base: nil, layers: [CachingLayer(store: cache, policy: .cacheOnly)])
    let recorder = Provenance.Recorder()
    // An item call names its entity: movie 3 is answered from the row the list stored.
    print(try await recorder.observing(offline).movie(id: 3).name)  // Zootopia
    // Never fetched: its local query runs over the stored movies of 2016, by rating.
    let rated = try await recorder.observing(offline).topRatedMovies(year: 2016)
    print(rated.map(\.name).joined(separator: ", "))  // Zootopia, Finding Dory
    print(recorder.all.map(\.origin.rawValue).joined(separator: ", "))  // cache, local
    // end snippet
    #expect(output.all == ["Zootopia", "Zootopia, Finding Dory", "cache, local"])
  }
}
