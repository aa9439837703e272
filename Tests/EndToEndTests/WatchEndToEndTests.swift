import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// `--watch` with the built `kernel`: a watcher in one process, a rating queued and synced by
/// others; each command's change reaches the watcher as one more JSON line, and Ctrl-C ends it
/// with exit 0.
@Suite(.timeLimit(.minutes(5))) struct WatchEndToEndTests {
  @Test func aProfileThatStoresNothingRefusesToWatchAsAUsageError() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(
      ["--profile", "api", "movies", "top-grossing", "--year", "2016", "--watch"])
    #expect(run.status == 64, "\(run)")
    #expect(run.stdout.isEmpty, "\(run)")
    #expect(
      run.stderr.contains("the api profile's stack for movies stores nothing to watch"),
      "\(run)")
  }

  /// A watch of what is not stored yet says so, naming the call, and waits.
  @Test func aWatchOfNothingStoredNamesWhatItWaitsFor() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let watcher = try await kernel.launch(["--profile", "offline", "movies", "get", "4", "--watch"])
    defer { watcher.process.send(SIGKILL) }
    // A bound against a hang.
    #expect(
      await watcher.stdout.wait(
        for: "Nothing is stored for movie 4 yet; watching.\n", limit: .seconds(5)))
    watcher.process.send(SIGINT)
    let ended = try await watcher.finish(within: .seconds(10))
    #expect(ended.status == 0, "\(ended)")
    #expect(ended.stdout == "Nothing is stored for movie 4 yet; watching.\n", "\(ended)")
  }

  /// A watched cache file that another program deletes, or replaces with a copy, ends the
  /// watch with one sentence and exit 69: SQLite goes on reading the file it opened, so a watch
  /// that went on would show that file forever, silently stale.
  @Test(arguments: ["deleted", "replaced"])
  func aCacheFileDeletedOrReplacedEndsTheWatchWithOneSentence(_ what: String) async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      #expect(try await kernel.run(local + ["movies", "get", "3"]).status == 0)
      let watcher = try await kernel.launch(
        local + ["--profile", "offline", "movies", "get", "3", "--watch", "--format", "json"])
      defer { watcher.process.send(SIGKILL) }
      #expect(await watcher.stdout.wait(for: #""origin":"cache""#, limit: .seconds(5)))

      let cache = kernel.dataDirectory.appendingPathComponent("cache.sqlite")
      if what == "deleted" {
        try FileManager.default.removeItem(at: cache)
      } else {
        let copy = kernel.dataDirectory.appendingPathComponent("copy.sqlite")
        try FileManager.default.copyItem(at: cache, to: copy)
        #expect(rename(copy.path, cache.path) == 0)
      }
      // A bound against a hang: the watcher looks at its file every 100 ms.
      let ended = try await watcher.finish(within: .seconds(10))
      #expect(ended.status == 69, "\(ended)")
      let said = ended.stderr.split(separator: "\n")
      #expect(said.count == 1, "\(ended)")
      #expect(
        said.first?.contains("could not be watched: another program deleted or replaced it")
          == true,
        "\(ended)")
      #expect(ended.stdout.split(separator: "\n").count == 1, "\(ended)")
    }
  }

  @Test func anotherProcessesWritesReachTheWatcherAsOneLineEach() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let offline = local + ["--profile", "offline"]
      let list = ["movies", "top-grossing", "--year", "2016"]
      #expect(try await kernel.run(local + list).status == 0)

      let watcher = try await kernel.launch(offline + list + ["--watch", "--format", "json"])
      defer { watcher.process.send(SIGKILL) }
      // Movie 3 alone, seen in the list: its own watch.
      let three = try await kernel.launch(
        offline + ["movies", "get", "3", "--watch", "--format", "json"])
      defer { three.process.send(SIGKILL) }
      // Each wait is a bound against a hang: the watcher polls its file every 100 ms.
      #expect(await watcher.stdout.wait(for: #""origin":"cache""#, limit: .seconds(5)))
      #expect(await three.stdout.wait(for: #""origin":"cache""#, limit: .seconds(5)))

      let queued = try await kernel.run(offline + ["movies", "rate", "3", "90"])
      #expect(queued.status == 0, "\(queued)")
      #expect(await watcher.stdout.wait(for: #""origin":"pending""#, limit: .seconds(5)))

      let synced = try await kernel.run(local + ["outbox", "sync"])
      #expect(synced.status == 0, "\(synced)")
      #expect(await watcher.stdout.wait(for: #""origin":"cache""#, count: 2, limit: .seconds(5)))

      #expect(await three.stdout.wait(for: #""origin":"cache""#, count: 2, limit: .seconds(5)))
      three.process.send(SIGINT)
      let one = try await three.finish(within: .seconds(10))
      #expect(one.status == 0, "\(one)")
      #expect(one.stdout.split(separator: "\n").count == 3, "\(one)")
      #expect(one.stdout.contains(#""origin":"pending""#), "\(one)")

      watcher.process.send(SIGINT)
      let ended = try await watcher.finish(within: .seconds(10))
      #expect(ended.status == 0, "\(ended)")
      let lines = ended.stdout.split(separator: "\n")
      #expect(lines.count == 3, "\(ended)")
      let origins = lines.compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["origin"]
          as? String
      }
      #expect(origins == ["cache", "pending", "cache"], "\(ended)")
      let ratings = lines.last.flatMap {
        ((try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["movies"]
          as? [[String: Any]])?.first { $0["id"] as? Int == 3 }?["rating"] as? Double
      }
      #expect(ratings == 90, "\(ended)")
    }
  }
}
