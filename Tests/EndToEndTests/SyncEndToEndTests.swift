import Foundation
import KernelTesting
import MoviesKit
import SampleApi
import Synchronization
import Testing

/// `kernel sync` end to end with the built `kernel`, against a loopback api whose changes feed
/// (`GET movies/changes?since=T`, WatermelonDB's pull shape) creates, updates and deletes
/// movies.
@Suite(.timeLimit(.minutes(5))) struct SyncEndToEndTests {
  /// `--every` only says how often `--watch` syncs: alone, or out of range, it is a usage error
  /// before anything is asked.
  @Test func everyWithoutWatchOrOutOfRangeIsAUsageError() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    for (arguments, sentence) in [
      (["--every", "5"], "--every is how often --watch syncs; give --watch too, or drop it."),
      (["--watch", "--every", "0"], "--every must be from 1 to 86400 seconds, not 0."),
    ] {
      let run = try await kernel.run(["sync"] + arguments)
      #expect(run.status == 64, "\(run)")
      #expect(run.stderr.hasPrefix("Error: \(sentence)\n"), "\(run)")
      #expect(run.stdout.isEmpty, "\(run)")
    }
  }

  /// The first sync stores every movie; the second asks only for what is new (the server sees
  /// the first one's token) and applies a created, an updated and a deleted movie: the deleted
  /// one answers 66 offline and leaves every list, and a rating not yet sent stays on top of
  /// the server's change of that movie.
  @Test func syncAppliesCreatedUpdatedAndDeletedMoviesAndAsksOnlyForWhatIsNew() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let first = try await kernel.run(local + ["sync"])
      #expect(first.status == 0, "\(first)")
      #expect(first.stdout == "+15 ~0 -0 movies (1 page)\n", "\(first)")
      // Every movie there is is stored: a local query says so, and a year with none is empty.
      let synced = try await kernel.run(offline + ["movies", "top-rated", "--year", "2016"])
      #expect(synced.stdout.contains("all there are as of the last complete list or sync"))
      let none = try await kernel.run(offline + ["movies", "top-rated", "--year", "1990"])
      #expect(none.status == 0 && none.stdout.hasPrefix("0 movies found"), "\(none)")
      #expect(try await kernel.run(offline + ["movies", "get", "3"]).status == 0)
      #expect(try await kernel.run(offline + ["movies", "rate", "5", "90"]).status == 0)
      #expect(try await kernel.run(offline + ["movies", "rate", "4", "70"]).status == 0)
      // A sync sends the kept writes that are due first: the api takes movie 4's rating and
      // cannot take movie 5's yet, which stays kept, its edit on top of what the feed says.
      server.handle("POST", "/api/movies/5/ratings") { _ in SampleResponse(status: 503) }

      let asked = Mutex<[String]>([])
      let two = try #require(SampleMovie.movie(id: 2))
      let five = try #require(SampleMovie.movie(id: 5))
      server.handle("GET", "/api/movies/changes") { request in
        let since = request.query["since"] ?? ""
        asked.withLock { $0.append(since) }
        guard since == "15" else { return SampleChanges.answer(timestamp: Int(since) ?? 0) }
        return SampleChanges.answer(
          created: [.generated(id: 9_999)], updated: [two.rated(12.5), five.rated(11)],
          deleted: [3], timestamp: 20)
      }
      let second = try await kernel.run(local + ["sync", "--format", "json"])
      #expect(second.status == 0, "\(second)")
      let feed = (second.json?["feeds"] as? [[String: Any]])?.first
      #expect(feed?["created"] as? Int == 1 && feed?["updated"] as? Int == 2, "\(second)")
      #expect(feed?["deleted"] as? Int == 1 && feed?["token"] as? String == "20", "\(second)")
      let writes = second.json?["writes"] as? [String: Any]
      #expect(writes?["sent"] as? Int == 1 && writes?["failed"] as? Int == 1, "\(second)")
      #expect(asked.withLock { $0 } == ["15"])

      let gone = try await kernel.run(offline + ["movies", "get", "3"])
      #expect(gone.status == 66, "\(gone)")
      let json = ["--format", "json"]
      let rated = try await kernel.run(offline + ["movies", "top-rated", "--year", "2016"] + json)
      #expect(!rated.movieIDs.isEmpty && !rated.movieIDs.contains(3), "\(rated)")
      #expect(rated.json?["complete"] as? Bool == true, "\(rated)")
      let changed = try await kernel.run(offline + ["movies", "get", "2"] + json)
      #expect((changed.json?["movies"] as? [[String: Any]])?.first?["rating"] as? Double == 12.5)
      let pending = try await kernel.run(offline + ["movies", "get", "5"] + json)
      #expect(pending.json?["origin"] as? String == "pending", "\(pending)")
      #expect((pending.json?["movies"] as? [[String: Any]])?.first?["rating"] as? Double == 90)
      #expect(try await kernel.run(offline + ["movies", "get", "9999"]).status == 0)

      // Movie 5's rating may be due again, and said to wait still, before the feed's line.
      let third = try await kernel.run(local + ["sync"])
      #expect(third.stdout.hasSuffix("+0 ~0 -0 movies (1 page)\n"), "\(third)")
      #expect(asked.withLock { $0 } == ["15", "20"])
      #expect(try await kernel.run(offline + ["sync"]).status == 69)
    }
  }

  /// A sync keeps what it is told: a cache the disk cannot hold (`ulimit -f`, as a full disk)
  /// fails it at once (78) in one sentence, before any request, where a read would warn and
  /// answer from the api; it never says it synced what it could not keep.
  @Test func aSyncWhoseCacheCannotBeOpenedFailsBeforeAnyRequest() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let asked = Mutex(0)
    try await withFixtureServer(routes: .sampleMovies()) { server in
      server.handle("GET", "/api/movies/changes") { _ in
        asked.withLock { $0 += 1 }
        return SampleChanges.answer(deleted: [4], timestamp: 16)
      }
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let full = try await kernel.run(local + ["sync"], fileSizeLimitKB: 40)
      #expect(full.status == 78, "\(full)")
      #expect(
        full.stderr.split(separator: "\n")
          == [
            "The cache \(kernel.dataDirectory.path)/cache.sqlite cannot be opened: the disk is full or failed; free some disk space, or choose another --data-dir."
          ],
        "\(full)")
      #expect(!full.stdout.contains("movies"), "\(full)")
      #expect(asked.withLock { $0 } == 0)
    }
  }

  /// `--watch` syncs again every `--every` seconds, saying each time what changed, until it
  /// is stopped; a profile with no store has nothing to sync into (78), one with no api nothing
  /// to sync from (69), each said in a sentence. Ctrl-C ends the watch with exit 0.
  @Test func syncWatchesAndSaysWhyAProfileCannotSync() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let watching = try await kernel.launch(local + ["sync", "--watch", "--every", "1"])
      #expect(await watching.stdout.wait(for: "+15 ~0 -0 movies", limit: .seconds(30)))
      server.handle("GET", "/api/movies/changes") { request in
        SampleChanges.answer(deleted: [4], timestamp: 16)
      }
      #expect(await watching.stdout.wait(for: "+0 ~0 -1 movies", limit: .seconds(30)))
      // The api failing is said, and the watch goes on: it syncs again when the api is back.
      server.handle("GET", "/api/movies/changes") { _ in SampleResponse(status: 503) }
      #expect(
        await watching.stderr.wait(
          for: "(HTTP 503); try again later. Syncing again in 1 s.", limit: .seconds(30)))
      server.handle("GET", "/api/movies/changes") { request in
        SampleChanges.answer(deleted: [4, 5], timestamp: 17)
      }
      #expect(await watching.stdout.wait(for: "+0 ~0 -2 movies", limit: .seconds(30)))
      // Ctrl-C ends the watch with exit 0, as every --watch.
      watching.process.send(SIGINT)
      let ended = try await watching.finish(within: .seconds(10))
      #expect(ended.status == 0, "\(ended)")

      let api = try await kernel.run(local + ["--profile", "api", "sync"])
      #expect(api.status == 78, "\(api)")
      #expect(api.stderr.contains("this profile's stack keeps nothing"), "\(api)")
      let offline = try await kernel.run(local + ["--profile", "offline", "sync"])
      #expect(offline.status == 69, "\(offline)")
      #expect(offline.stderr.contains("Syncing movies needs the api"), "\(offline)")
    }
  }

  /// SIGKILL during a 50-page sync, then `kernel sync` again: it goes on from the last page
  /// applied, and every movie is applied once.
  @Test func aSyncKilledHalfWayGoesOnFromItsLastPage() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies(extraMovies: 35)) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let asked = Mutex<[String]>([])
      let held = Mutex(true)
      server.handle("GET", "/api/movies/changes") { request in
        let since = request.query["since"] ?? "0"
        asked.withLock { $0.append(since) }
        // The 25th page waits until the test lets it go: the run is killed while it waits.
        while since == "24" && held.withLock({ $0 }) {
          try? await Task.sleep(for: .milliseconds(10))
        }
        return SampleChanges.page(since: since, perPage: "1", extraMovies: 35)
      }
      let running = try await kernel.launch(local + ["sync"])
      let deadline = ContinuousClock.now + .seconds(60)
      while !asked.withLock({ $0.contains("24") }) && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(10))
      }
      running.process.send(SIGKILL)
      _ = try await running.finish(within: .seconds(10))
      #expect(running.process.terminationReason == .uncaughtSignal)
      held.withLock { $0 = false }

      let again = try await kernel.run(local + ["sync"])
      #expect(again.status == 0, "\(again)")
      #expect(again.stdout == "+26 ~0 -0 movies (26 pages)\n", "\(again)")
      let stored = try await kernel.sqlite3(
        "cache.sqlite", "SELECT COUNT(*) FROM cache_entry WHERE key LIKE '% Movie/%';")
      #expect(stored.trimmingCharacters(in: .whitespacesAndNewlines) == "50", "\(stored)")
      #expect(asked.withLock { $0.filter { $0 == "0" }.count } == 1)
    }
  }
}
