import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

/// A conditional write end to end (`movies rate --if-unchanged`), with the built `kernel`: one
/// on a movie seen only in a list is refused before anything is sent or kept, under the
/// layered and the offline profile; once the movie is read on its own, it goes with the ETag
/// its answer named, and a stale one meets the api's 412.
@Suite(.timeLimit(.minutes(5))) struct ConditionalWriteEndToEndTests {
  @Test func aConditionalWriteOnAMovieSeenOnlyInAListNeverReachesTheServer() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let ratings = SampleRatings()
    let ifMatches = Mutex<[String?]>([])
    try await withFixtureServer(routes: .sampleMovies(ratings: ratings)) { server in
      let responder = server.responder
      server.handle("POST", "/api/movies/{id}/ratings") { request in
        ifMatches.withLock { $0.append(request.headers["if-match"]) }
        return await responder.original(request)
      }
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let listed = try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"])
      #expect(listed.status == 0, "\(listed)")

      for profile in [local, offline] {
        let refused = try await kernel.run(
          profile + ["movies", "rate", "3", "80", "--if-unchanged"])
        #expect(refused.status == 65, "\(refused)")
        #expect(refused.stderr.contains("If-Match"), "\(refused)")
        #expect(refused.stderr.contains("read it on its own first"), "\(refused)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused)")
      }
      let kept = try await kernel.run(offline + ["outbox", "list", "--format", "json"])
      #expect((kept.json?["writes"] as? [[String: Any]])?.isEmpty == true, "\(kept)")
      #expect(ifMatches.withLock { $0 }.isEmpty)
      #expect(ratings.applied(to: 3).isEmpty)

      // Read on its own, the movie's version is stored: the rating goes with it.
      #expect(try await kernel.run(local + ["movies", "get", "3"]).status == 0)
      let rated = try await kernel.run(local + ["movies", "rate", "3", "80", "--if-unchanged"])
      #expect(rated.status == 0, "\(rated)")
      #expect(ifMatches.withLock { $0 } == [FixtureRoutes.movieETag(3)])
      #expect(ratings.applied(to: 3).map(\.score) == [80])
      // A version the api no longer has: its 412, a conflict, nothing applied.
      _ = try await kernel.run(local + ["movies", "get", "3"])
      _ = try await kernel.sqlite3(
        "cache.sqlite", "UPDATE cache_entry SET etag = '\"movie-3-0\"' WHERE key LIKE '% Movie/3';")
      let stale = try await kernel.run(local + ["movies", "rate", "3", "70", "--if-unchanged"])
      #expect(stale.status == 65, "\(stale)")
      #expect(stale.stderr.contains("412") || stale.stderr.contains("no longer the version"))
      #expect(ratings.applied(to: 3).map(\.score) == [80])
    }
  }
}
