import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// Kept edits end to end, with the built `kernel`: a stored movie shows what the writes still
/// kept make of the api's copy, whichever of them is dropped, and an edit no kept write stands
/// behind any more (its outbox file removed) is undone, never shown for ever.
@Suite(.timeLimit(.minutes(5))) struct KeptEditsEndToEndTests {
  /// Movie 3's rating and where its answer came from, as `movies get 3 --format json` says.
  private static func movie3(_ kernel: Kernel, _ arguments: [String]) async throws
    -> (rating: Double?, origin: String?)
  {
    let got = try await kernel.run(arguments + ["movies", "get", "3", "--format", "json"])
    #expect(got.status == 0, "\(got)")
    let movie = (got.json?["movies"] as? [[String: Any]])?.first
    return ((movie?["rating"] as? NSNumber)?.doubleValue, got.json?["origin"] as? String)
  }

  private static func keptIds(_ kernel: Kernel, _ arguments: [String]) async throws -> [Int] {
    let listed = try await kernel.run(arguments + ["outbox", "list", "--format", "json"])
    let writes = try #require(listed.json?["writes"] as? [[String: Any]], "\(listed)")
    return writes.compactMap { $0["id"] as? Int }
  }

  @Test func droppingOneOfTwoKeptRatingsShowsWhatTheOtherMakesOfTheApisCopy() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let api = try await Self.movie3(kernel, local)
      let apiRating = try #require(api.rating)
      #expect(apiRating != 80 && apiRating != 90)
      for score in [80, 90] {
        #expect(try await kernel.run(offline + ["movies", "rate", "3", "\(score)"]).status == 0)
      }
      #expect(try await Self.movie3(kernel, offline) == (90, "pending"))
      let ids = try await Self.keptIds(kernel, offline)
      #expect(ids.count == 2)

      // The first rating dropped, the second still shows: it was what undid both.
      #expect(try await kernel.run(offline + ["outbox", "drop", "\(ids[0])"]).status == 0)
      #expect(try await Self.movie3(kernel, offline) == (90, "pending"))
      // The last dropped, the api's copy.
      #expect(try await kernel.run(offline + ["outbox", "drop", "\(ids[1])"]).status == 0)
      #expect(try await Self.movie3(kernel, offline) == (apiRating, "cache"))

      // The other order: the second dropped, the first shows.
      for score in [80, 90] {
        #expect(try await kernel.run(offline + ["movies", "rate", "3", "\(score)"]).status == 0)
      }
      let again = try await Self.keptIds(kernel, offline)
      #expect(try await kernel.run(offline + ["outbox", "drop", "\(again[1])"]).status == 0)
      #expect(try await Self.movie3(kernel, offline) == (80, "pending"))
    }
  }

  @Test func anEditWhoseOutboxFileWasRemovedIsUndoneAndSaidOnce() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let apiRating = try #require(try await Self.movie3(kernel, local).rating)
      #expect(try await kernel.run(offline + ["movies", "rate", "3", "80"]).status == 0)
      #expect(try await Self.movie3(kernel, offline) == (80, "pending"))

      for file in ["outbox.sqlite", "outbox.sqlite-wal", "outbox.sqlite-shm"] {
        try? FileManager.default.removeItem(
          at: kernel.dataDirectory.appendingPathComponent(file))
      }
      let undone = try await kernel.run(offline + ["movies", "get", "3", "--format", "json"])
      #expect(undone.status == 0, "\(undone)")
      #expect(
        undone.stderr.contains("1 cached copy showed an edit no kept write stands behind"),
        "\(undone)")
      #expect(undone.stderr.contains("Movie/3 now shows the api's copy"), "\(undone)")
      #expect(try await Self.movie3(kernel, offline) == (apiRating, "cache"))
      // Online, the api's answer is stored again (the copy is no longer pinned).
      let online = try await kernel.run(local + ["movies", "get", "3", "--format", "json"])
      #expect(online.status == 0 && online.stderr.isEmpty, "\(online)")
      #expect(try await Self.keptIds(kernel, offline).isEmpty)
    }
  }
}
