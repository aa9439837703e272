import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

/// The offline layer keeps data, not calls, end to end with the built `kernel`: movies seen in
/// one list answer their item call and every other list offline; a list never fetched is
/// answered by its local query; a fresher copy and a queued edit show in every list, and a
/// dropped write takes its edit back.
@Suite(.timeLimit(.minutes(5))) struct SourceOfTruthTests {
  /// A damaged stored movie is left out of a local query's answer, never a failed command: one
  /// that is not JSON matches no filter, one that no longer reads as a movie (a field missing)
  /// is counted and said once, and `doctor` counts both; a local answer that holds a pending
  /// edit says `pending`, as the stored list does.
  @Test func aDamagedMovieIsLeftOutOfALocalQueryAndAPendingEditSaysPending() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let rated = offline + ["movies", "top-rated", "--year", "2016", "--format", "json"]
      #expect(
        try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"]).status == 0)
      _ = try await kernel.sqlite3(
        "cache.sqlite",
        "UPDATE cache_entry SET payload = CAST('not json' AS BLOB) WHERE key LIKE '% Movie/3';"
          + " UPDATE cache_entry SET payload = CAST('{\"id\": 5, \"year\": 2016, \"rating\": 80}' AS BLOB)"
          + " WHERE key LIKE '% Movie/5';")
      let damaged = try await kernel.run(rated)
      #expect(damaged.status == 0, "\(damaged)")
      let ids = (damaged.json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
      #expect(ids?.count == 8, "\(damaged)")
      #expect(ids?.contains(3) == false && ids?.contains(5) == false, "\(damaged)")
      let said = damaged.stderr.split(separator: "\n")
      #expect(said.count == 1, "\(damaged)")
      #expect(said.first?.contains("1 stored Movie entity does not read as Movie") == true)
      // `doctor` reads every stored movie, and says the two it cannot read.
      let doctor = try await kernel.run(local + ["doctor"])
      #expect(doctor.status == 0, "\(doctor)")
      #expect(
        doctor.stdout.contains(
          "warn  stored models: 2 stored Movie rows do not read as Movie (damaged,"),
        "\(doctor)")

      #expect(try await kernel.run(offline + ["movies", "rate", "1", "99"]).status == 0)
      let pending = try await kernel.run(rated)
      #expect(pending.status == 0, "\(pending)")
      #expect(pending.json?["origin"] as? String == "pending", "\(pending)")
    }
  }

  /// A stored list one of whose movies no longer reads as a movie (stored by an older model,
  /// a field missing) answers offline with the others and says so once: never a failed list,
  /// never "nothing is cached" while rows exist; `cache stats` and `doctor` count it.
  @Test func aStoredListWithAMovieOfAnOlderModelAnswersWithTheOthers() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let grossing = ["movies", "top-grossing", "--year", "2016", "--format", "json"]
      let stored = try await kernel.run(local + grossing)
      #expect(stored.status == 0, "\(stored)")
      _ = try await kernel.sqlite3(
        "cache.sqlite",
        "UPDATE cache_entry SET payload = CAST('{\"id\": 5, \"year\": 2016}' AS BLOB),"
          + " version = 0 WHERE key LIKE '% Movie/5';")
      let offline = try await kernel.run(local + ["--profile", "offline"] + grossing)
      #expect(offline.status == 0, "\(offline)")
      #expect(offline.movieIDs == stored.movieIDs.filter { $0 != 5 }, "\(offline)")
      #expect(offline.stderr.contains("1 stored Movie entity does not read as Movie"), "\(offline)")
      #expect(!offline.stderr.contains("Nothing is cached"), "\(offline)")
      let said = "1 stored Movie row is from an older model, with no migration"
      let stats = try await kernel.run(local + ["cache", "stats"])
      #expect(stats.status == 0 && stats.stdout.contains("older:   " + said), "\(stats)")
      let json = try await kernel.run(local + ["cache", "stats", "--format", "json"])
      let fields = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
      #expect(fields?["olderModelRows"] as? [String: Int] == ["Movie": 1], "\(json)")
      let doctor = try await kernel.run(local + ["doctor"])
      #expect(
        doctor.status == 0 && doctor.stdout.contains("warn  stored models: " + said), "\(doctor)")
    }
  }

  /// An item answer naming another movie than the one asked is kept under its own id and the
  /// call refused: never a second copy of that movie under the id asked.
  @Test func anItemAnswerOfAnotherMovieIsRefusedAndNeverShownTwice() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let responder = server.responder
      server.handle("GET", "/api/movies/2") { request in
        var three = request
        three.path = "/api/movies/3"
        return await responder.original(three)
      }
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let json = ["--format", "json"]
      #expect(
        try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"]).status == 0)
      let two = try await kernel.run(local + ["movies", "get", "2"])
      #expect(two.status == 65, "\(two)")
      #expect(two.stderr.contains("with Movie 3, not Movie 2"), "\(two)")
      let rated = try await kernel.run(
        local + ["--profile", "offline", "movies", "top-rated", "--year", "2016"] + json)
      let ids = (rated.json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
      #expect(ids.filter { $0 == 3 }.count == 1, "\(rated)")
      #expect(Set(ids).count == ids.count, "\(rated)")
    }
  }

  @Test func moviesSeenOnceAnswerEveryCallThatHoldsThem() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // Movie 3's rating as the api has it now; nil: the bundled one.
    let rating = Mutex<Double?>(nil)
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let responder = server.responder
      server.handle("GET", "/api/movies/3") { request in
        var answer = await responder.original(request)
        guard let changed = rating.withLock({ $0 }),
          var movie = try? JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
        else { return answer }
        movie["rating"] = changed
        answer.body = (try? JSONSerialization.data(withJSONObject: movie)) ?? answer.body
        return answer
      }
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let json = ["--format", "json"]
      let listed = try await kernel.run(
        local + ["movies", "top-grossing", "--year", "2016"] + json)
      #expect(listed.status == 0, "\(listed)")
      let movies = try #require(listed.json?["movies"] as? [[String: Any]])
      #expect(movies.count == 10)

      // Movie 3, seen in the list, is answered offline by its item call.
      let three = try await kernel.run(offline + ["movies", "get", "3"] + json)
      #expect(three.status == 0, "\(three)")
      #expect(three.json?["origin"] as? String == "cache", "\(three)")
      #expect(three.movieNames == ["Captain America: Civil War"], "\(three)")

      // A list never fetched: the stored movies of 2016 by rating, origin local.
      let rated = try await kernel.run(offline + ["movies", "top-rated", "--year", "2016"] + json)
      #expect(rated.status == 0, "\(rated)")
      #expect(rated.json?["origin"] as? String == "local", "\(rated)")
      let ratings = (rated.json?["movies"] as? [[String: Any]])?.compactMap {
        $0["rating"] as? Double
      }
      #expect(ratings?.count == 10)
      #expect(ratings == ratings?.sorted(by: >), "\(rated)")
      let text = try await kernel.run(offline + ["movies", "top-rated", "--year", "2016"])
      #expect(text.stdout.contains("the api may know more"), "\(text)")
      // A year nothing was stored for is still nothing.
      let none = try await kernel.run(offline + ["movies", "top-rated", "--year", "1999"])
      #expect(none.status == 69, "\(none)")

      // A fresher copy of movie 3, brought by its item call, shows in the stored list.
      rating.withLock { $0 = 99.5 }
      #expect(try await kernel.run(local + ["movies", "get", "3"]).status == 0)
      let fresher = try await kernel.run(
        offline + ["movies", "top-grossing", "--year", "2016"] + json)
      let shown = (fresher.json?["movies"] as? [[String: Any]])?.first { $0["id"] as? Int == 3 }
      #expect(shown?["rating"] as? Double == 99.5, "\(fresher)")

      // A rating queued offline shows in the list as pending, and goes with its write.
      let queued = try await kernel.run(offline + ["movies", "rate", "5", "42"] + json)
      #expect(queued.status == 0, "\(queued)")
      let id = try #require((queued.json?["write"] as? [String: Any])?["id"] as? Int)
      let pending = try await kernel.run(
        offline + ["movies", "top-grossing", "--year", "2016"] + json)
      #expect(pending.json?["origin"] as? String == "pending", "\(pending)")
      let five = (pending.json?["movies"] as? [[String: Any]])?.first { $0["id"] as? Int == 5 }
      #expect(five?["rating"] as? Double == 42, "\(pending)")
      #expect(try await kernel.run(local + ["outbox", "drop", "\(id)"]).status == 0)
      let undone = try await kernel.run(
        offline + ["movies", "top-grossing", "--year", "2016"] + json)
      #expect(undone.json?["origin"] as? String == "cache", "\(undone)")
      let back = (undone.json?["movies"] as? [[String: Any]])?.first { $0["id"] as? Int == 5 }
      #expect(back?["rating"] as? Double != 42, "\(undone)")
    }
  }
}
