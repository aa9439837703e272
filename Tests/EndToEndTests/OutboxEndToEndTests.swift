import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

/// The outbox end to end, with the built `kernel` against the sample API on loopback: ratings
/// made while the server is down are kept (exit 0) and applied once, whatever happens to the
/// syncs that send them.
@Suite(.timeLimit(.minutes(5))) struct OutboxEndToEndTests {
  private static func rate(_ kernel: Kernel, _ base: String, _ id: Int, _ score: Int) async throws
    -> BuiltCommand.Run
  {
    try await kernel.run(["--base-url", base, "movies", "rate", "\(id)", "\(score)"])
  }

  private static func kept(_ kernel: Kernel, _ base: String) async throws -> [[String: Any]] {
    let listed = try await kernel.run(["--base-url", base, "outbox", "list", "--format", "json"])
    return try #require(listed.json?["writes"] as? [[String: Any]], "\(listed)")
  }

  @Test func ratingsKeptWhileTheServerIsDownAreAppliedOnceDespiteAKilledSync() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // Nothing listens at the port, and no other test's server is given it, until the server that
    // comes back at the same origin takes it over.
    let port = try RefusingPort.hold()
    let base = port.baseURL
    for (id, score) in [(7, 70), (7, 71), (3, 30)] {
      let rated = try await Self.rate(kernel, base, id, score)
      #expect(rated.status == 0, "\(rated)")
      #expect(
        rated.stdout.contains("queued: a rating of movie \(id) is kept, to be sent to http:"),
        "\(rated)")
    }
    let kept = try await Self.kept(kernel, base)
    #expect(kept.map { $0["summary"] as? String } == [7, 7, 3].map { "a rating of movie \($0)" })
    #expect(kept.allSatisfy { $0["state"] as? String == "pending" })

    // The server comes back; it holds the first rating's answer until the sync is killed.
    let ratings = SampleRatings()
    let server = try await FixtureServer.start(routes: .sampleMovies(ratings: ratings), on: port)
    defer { Task { await server.stop() } }
    let (arrived, arrival) = AsyncStream<Void>.makeStream()
    let (released, release) = AsyncStream<Void>.makeStream()
    let held = Mutex(true)
    let responder = server.responder
    server.handle("POST", "/api/movies/{id}/ratings") { request in
      // The first rating of movie 7 is held; movie 3's goes through (the sync sends writes of
      // other keys beside it), and the second of movie 7 waits for the first.
      let first =
        request.parameters["id"] == "7"
        && held.withLock { holding in
          defer { holding = false }
          return holding
        }
      if first {
        arrival.yield()
        for await _ in released { break }
      }
      return await responder.original(request)
    }
    let sync = try await kernel.launch(["--base-url", base, "outbox", "sync"])
    for await _ in arrived { break }
    sync.process.send(SIGKILL)
    _ = try await sync.finish(within: .seconds(30))
    release.yield()
    // The server applied the first rating, and the killed sync never heard so.
    #expect(await Self.eventually { ratings.applied(to: 7).count == 1 })

    let again = try await kernel.run(["--base-url", base, "outbox", "sync"])
    #expect(again.status == 0, "\(again)")
    #expect(again.stdout.contains("0 writes kept"), "\(again)")
    // The first was sent again with its key and applied once; each rating once, in order.
    #expect(responder.requests(to: "movies/7/ratings") == 3)
    #expect(ratings.applied(to: 7).map(\.score) == [70, 71])
    #expect(ratings.applied(to: 3).map(\.score) == [30])
    #expect(try await Self.kept(kernel, base).isEmpty)
  }

  @Test func concurrentFirstRunsOnANewDataFolderKeepEveryWrite() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // Before one opening at a time, 24 first runs at once lost a few ratings in most rounds
    // ("table outbox_write already exists", exit 78).
    for round in 1...3 {
      let data = kernel.workingDirectory.appendingPathComponent("data-\(round)").path
      var running: [BuiltCommand.Running] = []
      for id in 1...24 {
        running.append(
          try await kernel.launch(
            ["--data-dir", data, "--profile", "offline", "movies", "rate", "\(id)", "70"]))
      }
      var runs: [BuiltCommand.Run] = []
      for run in running { runs.append(try await run.finish(within: .seconds(60))) }
      #expect(
        runs.allSatisfy { $0.status == 0 }, "round \(round): \(runs.filter { $0.status != 0 })")
      let listed = try await kernel.run(
        ["--data-dir", data, "--profile", "offline", "outbox", "list", "--format", "json"])
      #expect((listed.json?["writes"] as? [[String: Any]])?.count == 24, "\(listed)")
    }
  }

  @Test func twoSyncsAtOnceSendEachWriteOnce() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let port = try RefusingPort.hold()
    let base = port.baseURL
    for id in 1...6 { #expect(try await Self.rate(kernel, base, id, 50 + id).status == 0) }
    var options = SampleApiResponder.Options()
    options.latency = .milliseconds(20)
    let ratings = SampleRatings()
    let server = try await FixtureServer.start(
      options: options, routes: .sampleMovies(ratings: ratings), on: port)
    defer { Task { await server.stop() } }
    let first = try await kernel.launch(["--base-url", base, "outbox", "sync"])
    let second = try await kernel.launch(["--base-url", base, "outbox", "sync"])
    let runs = [
      try await first.finish(within: .seconds(60)), try await second.finish(within: .seconds(60)),
    ]
    #expect(runs.allSatisfy { $0.status == 0 }, "\(runs)")
    #expect((1...6).map { ratings.applied(to: $0).count } == Array(repeating: 1, count: 6))
    #expect(server.responder.requests(to: "movies/1/ratings") == 1)
    #expect(try await Self.kept(kernel, base).isEmpty)
  }

  @Test func aConflictIsKeptUntilRetriedOrDropped() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let conflicts = SampleRatings(conflicts: [5, 6])
    let server = try await FixtureServer.start(routes: .sampleMovies(ratings: conflicts))
    defer { Task { await server.stop() } }
    let base = server.baseURL.absoluteString
    // Sent at once, the api's 409 is the caller's: nothing kept.
    let refused = try await Self.rate(kernel, base, 5, 55)
    #expect(refused.status == 65, "\(refused)")
    #expect(refused.stderr.contains("rated in the meantime"), "\(refused)")
    #expect(try await Self.kept(kernel, base).isEmpty)

    // Kept offline, then synced: a conflict, with the server's body.
    let offline = ["--profile", "offline", "--base-url", base]
    for id in [5, 6] {
      #expect(try await kernel.run(offline + ["movies", "rate", "\(id)", "60"]).status == 0)
    }
    let synced = try await kernel.run(["--base-url", base, "outbox", "sync"])
    #expect(synced.stdout.contains("2 in conflict"), "\(synced)")
    // Something is left for the user: not a sync that did its work.
    #expect(synced.status == 65, "\(synced)")
    #expect(
      synced.stderr.contains("2 writes in conflict, rejected or damaged need you"), "\(synced)")
    let kept = try await Self.kept(kernel, base)
    #expect(kept.map { $0["state"] as? String } == ["conflict", "conflict"])
    #expect((kept.first?["serverBody"] as? String)?.contains("rated in the meantime") == true)
    let ids = kept.compactMap { $0["id"] as? Int }
    // doctor and cache stats say so, without failing: the conflicts are the user's to resolve.
    let doctor = try await kernel.run(["--base-url", base, "doctor"])
    #expect(doctor.status == 0, "\(doctor)")
    #expect(
      doctor.stdout.contains("warn  outbox: 0 pending, 2 in conflict, 0 rejected"), "\(doctor)")
    let stats = try await kernel.run(["--base-url", base, "cache", "stats", "--format", "json"])
    #expect(
      stats.json?["writes"] as? [String: Int] == [
        "pending": 0, "conflict": 2, "rejected": 0, "damaged": 0,
      ],
      "\(stats)")

    conflicts.setConflict(false, movie: 5)
    let retried = try await kernel.run(["--base-url", base, "outbox", "retry", "\(ids[0])"])
    #expect(retried.stdout.contains("Sent 1 write"), "\(retried)")
    #expect(conflicts.applied(to: 5).map(\.score) == [60])
    let dropped = try await kernel.run(["--base-url", base, "outbox", "drop", "\(ids[1])"])
    #expect(dropped.status == 0, "\(dropped)")
    #expect(try await Self.kept(kernel, base).isEmpty)
    #expect(conflicts.applied(to: 6).isEmpty)
    let unknown = try await kernel.run(["--base-url", base, "outbox", "drop", "\(ids[1])"])
    #expect(unknown.status == 64, "\(unknown)")
  }

  /// `outbox resolve ID` sends a write in conflict again over the server's version: its
  /// `If-Match` the ETag the conflict answered with, a new idempotency key, then a sync.
  @Test func aConflictResolvedOverTheServersVersionIsSentWithItsETag() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let received = Mutex<[String?]>([])
    try await withFixtureServer(routes: .sampleMovies()) { server in
      server.handle("POST", "/api/movies/7/ratings") { request in
        let ifMatch = request.headers["if-match"]
        received.withLock { $0.append(ifMatch) }
        guard ifMatch == "\"r2\"" else {
          return SampleResponse(
            status: 409, headers: ["Content-Type": "application/json", "ETag": "\"r2\""],
            body: Data(#"{"message": "rated in the meantime"}"#.utf8))
        }
        return SampleResponse(
          status: 201, headers: ["Content-Type": "application/json"],
          body: Data(#"{"movie": 7, "score": 70}"#.utf8))
      }
      let base = server.baseURL.absoluteString
      let offline = ["--profile", "offline", "--base-url", base]
      #expect(try await kernel.run(offline + ["movies", "rate", "7", "70"]).status == 0)
      let synced = try await kernel.run(["--base-url", base, "outbox", "sync"])
      #expect(synced.status == 65, "\(synced)")
      #expect(
        synced.stderr.contains(
          "1 write in conflict, rejected or damaged needs you: outbox list shows it; retry,"
            + " resolve or drop it."), "\(synced)")
      let conflict = try #require(try await Self.kept(kernel, base).first)
      #expect(conflict["serverETag"] as? String == "\"r2\"", "\(conflict)")
      let id = try #require(conflict["id"] as? Int)

      let resolved = try await kernel.run(["--base-url", base, "outbox", "resolve", "\(id)"])
      #expect(resolved.status == 0, "\(resolved)")
      #expect(resolved.stdout.contains("Sent 1 write"), "\(resolved)")
      #expect(received.withLock { $0 } == [nil, "\"r2\""])
      #expect(try await Self.kept(kernel, base).isEmpty)
      let unknown = try await kernel.run(["--base-url", base, "outbox", "resolve", "\(id)"])
      #expect(unknown.status == 64, "\(unknown)")
    }
  }

  /// Whether `condition` holds within a few seconds: for what another process finishes.
  private static func eventually(_ condition: () -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while clock.now < deadline {
      if condition() { return true }
      try? await clock.sleep(for: .milliseconds(10))
    }
    return condition()
  }
}

extension OutboxEndToEndTests {
  /// The sync a run makes before its read takes a slice of the call deadline, not the whole:
  /// with the api holding every kept write's answer, the read still answers (the limit of the
  /// run is only a guard against a hang: the call deadline is ten minutes).
  @Test func aRunsSyncOfKeptWritesNeverHoldsUpItsRead() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let base = server.baseURL.absoluteString
      for id in 1...3 {
        let kept = try await kernel.run(
          ["--base-url", base, "--profile", "offline", "movies", "rate", "\(id)", "50"])
        #expect(kept.status == 0, "\(kept)")
      }
      let never = Counter()
      server.handle("POST", "/api/movies/{id}/ratings") { _ in
        await never.reach(1)
        return .error(503, "never")
      }
      let read = try await kernel.run(
        ["--base-url", base, "--timeouts-call-seconds", "600", "movies", "get", "4"],
        within: .seconds(60))
      #expect(read.status == 0, "\(read)")
      #expect(read.stderr.contains("The outbox sync was cut off"), "\(read)")
      _ = never.increment()
      let kept = try await Self.kept(kernel, base)
      #expect(kept.count == 3, "\(kept)")
    }
  }
}

extension OutboxEndToEndTests {
  /// A sync whose credential the api refuses stops at once, keeps every write and exits 77 with
  /// one line saying to log in; one whose api cannot be reached exits 69.
  @Test func aSyncThatCannotSendExitsWithWhatStoppedIt() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      let base = server.baseURL.absoluteString
      let offline = ["--profile", "offline", "--base-url", base]
      for id in [1, 2] {
        #expect(try await kernel.run(offline + ["movies", "rate", "\(id)", "60"]).status == 0)
      }
      server.handle("GET", "/api/auth") { _ in .error(403, "this account is locked") }
      let refused = try await kernel.run(["--base-url", base, "outbox", "sync"])
      #expect(refused.status == 77, "\(refused)")
      #expect(refused.stderr.contains("log in (auth login), then outbox sync"), "\(refused)")
      #expect(try await Self.kept(kernel, base).count == 2)
    }
    let down = try RefusingPort.url().absoluteString + "/api/"
    let offline = ["--profile", "offline", "--base-url", down]
    #expect(try await kernel.run(offline + ["movies", "rate", "3", "60"]).status == 0)
    let unreachable = try await kernel.run(["--base-url", down, "outbox", "sync"])
    #expect(unreachable.status == 69, "\(unreachable)")
    // The two writes of the first server are another environment's: said, not counted as its.
    #expect(
      unreachable.stderr.contains(
        "2 writes kept for another environment (http://127.0.0.1:"), "\(unreachable)")
    #expect(unreachable.stderr.contains("1 write still waits for the api"), "\(unreachable)")
  }
}

extension OutboxEndToEndTests {
  /// A write the api took whose answer cannot be read is applied, not kept to send again: said
  /// in one sentence (the problem a clause in it), exit 0.
  @Test func aWriteTakenWithAnUnreadableAnswerIsSaidAppliedAndNotKept() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      server.handle("POST", "/api/movies/3/ratings") { _ in
        SampleResponse(
          status: 201, headers: ["Content-Type": "application/json"], body: Data("{oops".utf8))
      }
      let base = server.baseURL.absoluteString
      let rated = try await kernel.run(["--base-url", base, "movies", "rate", "3", "80"])
      #expect(rated.status == 0, "\(rated)")
      #expect(
        rated.stdout
          == "Rated movie 3 80: the api took the rating, but its answer could not be read (POST"
          + " movies/3/ratings answered data that does not fit: the body is not valid JSON); it is"
          + " applied, so do not rate again.\n", "\(rated)")
      #expect(try await Self.kept(kernel, base).isEmpty)
    }
  }
}
