import Foundation
import KernelTesting
import MoviesKit
import SampleApi
import Testing

/// Deletions on the server reach the store, end to end with the built `kernel`: a movie the
/// api answers 404 for leaves every offline answer.
@Suite(.timeLimit(.minutes(5))) struct DeletionsEndToEndTests {
  /// After the api says movie 3 does not exist, the offline item answers "not found" (66), not
  /// the old copy; the stored top-grossing list shrinks by it (not a miss), and the local query
  /// of top-rated no longer ranks it. The server's copy coming back stores it again.
  @Test func aMovieDeletedOnTheServerLeavesEveryOfflineAnswer() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let grossing = ["movies", "top-grossing", "--year", "2016", "--format", "json"]
      let rated = ["movies", "top-rated", "--year", "2016", "--format", "json"]
      #expect(try await kernel.run(local + grossing).status == 0)
      let before = (try await kernel.run(offline + grossing)).movieIDs
      #expect(before.contains(3), "\(before)")
      #expect((try await kernel.run(offline + rated)).movieIDs.contains(3))

      let responder = server.responder
      server.handle("GET", "/api/movies/3") { _ in .error(404, "no movie with id 3") }
      let deleted = try await kernel.run(local + ["movies", "get", "3"])
      #expect(deleted.status == 66, "\(deleted)")

      let item = try await kernel.run(offline + ["movies", "get", "3"])
      #expect(item.status == 66, "\(item)")
      #expect(item.stderr.contains("movie 3 does not exist"), "\(item)")
      let shrunk = try await kernel.run(offline + grossing)
      #expect(shrunk.status == 0, "\(shrunk)")
      #expect(shrunk.movieIDs == before.filter { $0 != 3 }, "\(shrunk)")
      let ranked = try await kernel.run(offline + rated)
      #expect(ranked.status == 0, "\(ranked)")
      #expect(!ranked.movieIDs.isEmpty && !ranked.movieIDs.contains(3), "\(ranked)")

      server.handle("GET", "/api/movies/3") { await responder.original($0) }
      #expect(try await kernel.run(local + ["movies", "get", "3"]).status == 0)
      #expect(try await kernel.run(offline + ["movies", "get", "3"]).status == 0)
    }
  }
}
