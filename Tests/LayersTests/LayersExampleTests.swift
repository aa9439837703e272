import Domain
import Foundation
import KernelTesting
import Layers
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
