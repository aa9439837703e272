import Api
import Composition
import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Store
import Synchronization
import Testing

/// The outbox over real loopback HTTP and a real SQLite file: every state a kept write goes
/// through, the order per ordering key, the idempotency key of every try, the optimistic copy.
@Suite(.timeLimit(.minutes(1))) struct OutboxTests {
  /// A server whose rating routes can be made to answer 503, and that records the
  /// `Idempotency-Key` of every rating it is sent.
  final class Flaky: Sendable {
    let failing = Mutex<Set<Int>>([])
    let keys = Mutex<[Int: [String]]>([:])

    func install(on responder: SampleApiResponder) {
      responder.handle("POST", "/api/movies/{id}/ratings") { [self] request in
        let id = Int(request.parameters["id"] ?? "") ?? 0
        keys.withLock { $0[id, default: []].append(request.headers["idempotency-key"] ?? "") }
        if failing.withLock({ $0.contains(id) }) { return .error(503, "down for maintenance") }
        return await responder.original(request)
      }
    }
  }

  struct Setup {
    let api: LoopbackApi
    let outbox: Outbox
    let cache: any CacheStore
    let clock: TestWallClock
    let ratings: SampleRatings
    let flaky = Flaky()

    var origin: String { api.context.environment.origin.description }

    /// A writer of `stack`: with the api, with the outbox, or both.
    func writer(api hasApi: Bool = true, outbox hasOutbox: Bool = true) -> Writer {
      Writer(
        origin: origin, partition: origin, send: hasApi ? .api(api.client) : nil,
        outbox: hasOutbox ? outbox : nil, cache: cache)
    }

    func sync(force: Bool = false) async throws -> SyncReport {
      try await outbox.sync(origin: origin, send: .api(api.client), cache: cache, force: force)
    }
  }

  /// Where a setup keeps its stored copies and writes: the SQLite files apps keep on disk, or
  /// the in-memory twin (one `InMemoryStore` for both). The outbox's rules hold on either.
  enum Kept: String, CaseIterable, Sendable { case files, twin }

  func withSetup(
    conflicts: Set<Int> = [], keptIn kept: Kept = .files, _ body: (Setup) async throws -> Void
  ) async throws {
    try await withTemporaryDirectory { folder in
      let ratings = SampleRatings(conflicts: conflicts)
      try await withLoopbackApi(routes: .sampleMovies(ratings: ratings), authentication: nil) {
        api in
        let clock = TestWallClock()
        let twin = InMemoryStore()
        let setup = Setup(
          api: api,
          outbox: Outbox(
            store: kept == .twin
              ? twin : try SQLiteOutboxStore.open(at: folder.appending("outbox.sqlite")),
            clock: clock.wallClock),
          cache: kept == .twin
            ? twin : try SQLiteCacheStore.open(at: folder.appending("cache.sqlite")),
          clock: clock, ratings: ratings)
        setup.flaky.install(on: api.responder)
        try await body(setup)
      }
    }
  }

  @Test(arguments: Kept.allCases)
  func aWriteTheApiTakesIsSentAtOnceAndOneItCannotIsKept(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let sent = try await setup.writer().write(try .rate(movie: 3, score: 70))
      #expect(sent.value?.score == 70)
      #expect(try await setup.outbox.store.writes().isEmpty)

      setup.flaky.failing.withLock { _ = $0.insert(4) }
      guard case .queued(let kept) = try await setup.writer().write(try .rate(movie: 4, score: 40))
      else { throw TestFailure("a write the api answered 503 was not kept") }
      #expect(kept.state == .pending)
      #expect(try await setup.outbox.store.writes().map(\.id) == [kept.id])
      #expect(setup.ratings.applied(to: 4).isEmpty)
      // [api] alone: the failure is the caller's.
      await #expect(throws: HTTPFailure.self) {
        try await setup.writer(outbox: false).write(try .rate(movie: 4, score: 41))
      }
    }
  }

  @Test func aWriteIsDescribedOnceAndSentOrKept() async throws {
    try await withSetup { setup in
      let writer = setup.writer()
      var said: [String] = []
      for reachable in [true, false] {
        setup.flaky.failing.withLock { $0 = reachable ? [] : [7] }
        // snippet: offline-writes
        let write = ServiceCall<Rating>(
          .init(.post("movies/7/ratings", body: try .json(["score": 80]))), name: "rateMovie",
          summary: "a rating of movie 7", stored: false
        ).writing(
          ordering: "movies/7", invalidates: ["movies/7"],
          optimistic: [.update(ServiceCall<Movie>.movie(id: 7)) { $0.rating = 80 }])
        switch try await writer.write(write) {
        case .sent(let rating): said.append("rated \(rating.score)")
        case .queued(let pending): said.append("queued: \(pending.summary)")
        case .applied(let problem): said.append("applied: \(problem)")
        }
        // end snippet
      }
      #expect(said == ["rated 80", "queued: a rating of movie 7"])
    }
  }

  @Test(arguments: Kept.allCases) func everyStateOfAKeptWrite(keptIn kept: Kept) async throws {
    try await withSetup(conflicts: [5], keptIn: kept) { setup in
      let keeping = setup.writer(api: false)
      let done = try #require(try await keeping.write(try .rate(movie: 3, score: 70)).kept)
      let conflict = try #require(try await keeping.write(try .rate(movie: 5, score: 50)).kept)
      let rejected = try #require(try await keeping.write(try .rate(movie: 4, score: 0)).kept)
      let again = try #require(try await keeping.write(try .rate(movie: 6, score: 60)).kept)
      setup.flaky.failing.withLock { _ = $0.insert(6) }

      let first = try await setup.sync()
      #expect(first.sent.map(\.id) == [done.id])
      #expect(first.conflicts.map(\.id) == [conflict.id])
      #expect(first.rejected.map(\.id) == [rejected.id])
      #expect(first.failed.map(\.id) == [again.id])
      let kept = Dictionary(
        try await setup.outbox.store.writes().map { ($0.id, $0) }, uniquingKeysWith: { $1 })
      #expect(kept[done.id] == nil)
      #expect(kept[conflict.id]?.state == .conflict)
      #expect(
        kept[conflict.id]?.serverBody.map { String(decoding: $0, as: UTF8.self) }?
          .contains("rated in the meantime") == true)
      #expect(kept[rejected.id]?.state == .rejected)
      #expect(kept[rejected.id]?.lastError?.contains("from 1 to 100") == true)
      #expect(kept[again.id]?.state == .pending)
      #expect(kept[again.id]?.tries == 1)

      // Backoff: an automatic sync leaves it until its time; a forced one sends it.
      setup.flaky.failing.withLock { $0.removeAll() }
      #expect(try await setup.sync().tried == 0)
      setup.clock.advance(31)
      #expect(try await setup.sync().sent.map(\.id) == [again.id])
      // The same idempotency key on both tries, the one the write was made with.
      #expect(setup.flaky.keys.withLock { $0[6] } == [again.idempotencyKey, again.idempotencyKey])
      #expect(setup.ratings.applied(to: 6).map(\.score) == [60])

      // A conflict is resolved by retrying it as it is, once the server allows it.
      setup.ratings.setConflict(false, movie: 5)
      #expect(
        try await setup.outbox.store.retry(conflict.id, now: setup.clock.now)?.state == .pending)
      #expect(try await setup.sync().sent.map(\.id) == [conflict.id])
      #expect(setup.ratings.applied(to: 5).map(\.score) == [50])
      #expect(try await setup.outbox.store.drop(rejected.id)?.id == rejected.id)
      #expect(try await setup.outbox.store.writes().isEmpty)
    }
  }

  @Test(arguments: Kept.allCases)
  func aConflictResolvedWithTheServersVersionIsSentInItsPlace(keptIn kept: Kept) async throws {
    try await withSetup(conflicts: [5], keptIn: kept) { setup in
      let writer = setup.writer(api: false)
      let conflict = try #require(try await writer.write(try .rate(movie: 5, score: 50)).kept)
      let behind = try #require(try await writer.write(try .rate(movie: 5, score: 51)).kept)
      #expect(try await setup.sync().conflicts.map(\.id) == [conflict.id])
      // The one behind it waits for the conflict to be resolved.
      #expect(try await setup.sync(force: true).tried == 0)
      setup.ratings.setConflict(false, movie: 5)
      let anew = try ServiceCall<Rating>.rate(movie: 5, score: 55).written()
      let resolved = try #require(try await writer.resolve(conflict.id, with: anew))
      #expect(resolved.id == conflict.id)
      #expect(resolved.state == .pending)
      #expect(resolved.idempotencyKey == anew.idempotencyKey)
      #expect(try await setup.sync().sent.map(\.id) == [conflict.id, behind.id])
      #expect(setup.ratings.applied(to: 5).map(\.score) == [55, 51])
      #expect(try await writer.resolve(conflict.id, with: anew) == nil)
    }
  }

  @Test(arguments: Kept.allCases)
  func writesOfOneKeyGoInTheOrderTheyWereMade(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let keeping = setup.writer(api: false)
      for score in [10, 20, 30] { _ = try await keeping.write(try .rate(movie: 7, score: score)) }
      _ = try await keeping.write(try .rate(movie: 8, score: 80))
      setup.flaky.failing.withLock { _ = $0.insert(7) }
      let blocked = try await setup.sync()
      // The first of movie 7 failed: the two behind it wait; movie 8 goes on.
      #expect(blocked.failed.count == 1)
      #expect(blocked.sent.map(\.summary) == ["a rating of movie 8"])
      #expect(setup.flaky.keys.withLock { $0[7]?.count } == 1)
      // A new write of the key, with the api up, goes behind them.
      setup.flaky.failing.withLock { $0.removeAll() }
      _ = try await setup.writer().write(try .rate(movie: 7, score: 40))
      #expect(try await setup.sync(force: true).sent.count == 4)
      #expect(setup.ratings.applied(to: 7).map(\.score) == [10, 20, 30, 40])
    }
  }

  @Test func aKeptWriteShowsInTheCachedCopyUntilTheApisAnswerReplacesIt() async throws {
    try await withSetup { setup in
      let call = ServiceCall<Movie>.movie(id: 9)
      let layered = { (policy: CachePolicy, api: Bool) in
        ServiceStack(
          client: api ? setup.api.client : nil,
          layers: [CachingLayer(store: setup.cache, policy: policy, partition: setup.origin)])
      }
      let original = try await layered(.networkFirst, true).answer(call).value
      _ = try await setup.writer(api: false).write(try .rate(movie: 9, score: 99))

      let shown = try await layered(.cacheOnly, false).answer(call)
      #expect(shown.value.rating == 99)
      #expect(shown.origin == .pending)
      #expect(try await setup.cache.entry(for: setup.origin + " " + call.key)?.isPending == true)

      #expect(try await setup.sync().sent.count == 1)
      // Taken by the api without its answering the movie: the copy stays, stale, no longer
      // pending, and the next network read refreshes it.
      let settled = try #require(try await setup.cache.entry(for: setup.origin + " " + call.key))
      #expect(!settled.isPending && settled.isStale)
      let fetched = try await layered(.networkFirst, true).answer(call)
      #expect(fetched.value.rating == original.rating)
      #expect(fetched.origin == .network)
    }
  }
}

extension OutboxTests {
  /// A kept write that is dropped, or that the api refuses, takes its optimistic edit with it:
  /// the copy it edited no longer shows it pending.
  @Test(arguments: ["dropped", "rejected"], Kept.allCases)
  func aDroppedOrRejectedWritesEditIsUndone(ending: String, keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let key = setup.origin + " " + ServiceCall<Movie>.movie(id: 9).key
      let cached = ServiceStack(
        client: setup.api.client,
        layers: [CachingLayer(store: setup.cache, policy: .networkFirst, partition: setup.origin)])
      _ = try await cached.answer(.movie(id: 9))
      let kept = try #require(
        try await setup.writer(api: false).write(try .rate(movie: 9, score: 99)).kept)
      #expect(try await setup.cache.entry(for: key)?.isPending == true)
      if ending == "dropped" {
        #expect(try await setup.outbox.drop(kept.id, cache: setup.cache)?.id == kept.id)
      } else {
        setup.api.responder.handle("POST", "/api/movies/{id}/ratings") { _ in
          .error(422, "scores go from 0 to 10")
        }
        #expect(try await setup.sync().rejected.count == 1)
      }
      #expect(try await setup.cache.entry(for: key)?.isPending != true)
    }
  }
}

extension OutboxTests {
  /// A write the api applied (201) but answered with a body that does not fit is done: it is
  /// neither a failure (that would invite a second, applied write) nor kept.
  @Test func aWriteTheApiTookWithAnUnreadableAnswerIsApplied() async throws {
    try await withSetup { setup in
      let posted = Counter()
      setup.api.responder.handle("POST", "/api/movies/{id}/ratings") { _ in
        _ = posted.increment()
        return SampleResponse(
          status: 201, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
      }
      let written = try await setup.writer().write(try .rate(movie: 4, score: 40))
      guard case .applied(let problem) = written else {
        Issue.record("expected an applied write, got \(written)")
        return
      }
      #expect(!problem.isEmpty)
      #expect(posted.value == 1)
      #expect(try await setup.outbox.store.writes().isEmpty)
    }
  }

  /// A write whose route accepts only JSON, answered 201 as `text/html`: the api took it, so it
  /// is applied when sent at once, and settled as sent by a sync, never sent again.
  @Test(arguments: Kept.allCases)
  func aWriteTakenWithAnAnswerOfAnotherTypeIsNeverSentAgain(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let posted = Counter()
      setup.api.responder.handle("POST", "/api/movies/{id}/ratings") { _ in
        _ = posted.increment()
        return .staticFile(Data(#"{"id": 1, "movieId": 4, "score": 40}"#.utf8), status: 201)
      }
      var route = Route.post("movies/4/ratings", body: try .json(["score": 40]))
      route.acceptableContentTypes = ["application/json"]
      let rate = ServiceCall<Rating>(
        .init(route), name: "rateMovie", summary: "a rating of movie 4", stored: false
      ).writing(ordering: "movies/4")
      let written = try await setup.writer().write(rate)
      guard case .applied(let problem) = written else {
        Issue.record("expected an applied write, got \(written)")
        return
      }
      #expect(problem.contains("answered text/html; charset=utf-8, not application/json"))
      #expect(posted.value == 1)

      guard case .queued = try await setup.writer(api: false).write(rate) else {
        throw TestFailure("a write with no api was not kept")
      }
      let report = try await setup.sync(force: true)
      #expect(report.sent.count == 1 && report.tried == 1, "\(report)")
      #expect(try await setup.outbox.store.writes().isEmpty)
      _ = try await setup.sync(force: true)
      #expect(posted.value == 2)
    }
  }
}

extension OutboxTests {
  /// A kept write whose request bytes cannot be read is never sent: the sync settles it as
  /// rejected, saying it can only be dropped, instead of trying it again for ever.
  @Test func aWriteWhoseBytesCannotBeReadWaitsToBeDropped() async throws {
    try await withSetup { setup in
      let kept = try #require(
        try await setup.writer(api: false).write(try .rate(movie: 4, score: 40)).kept)
      let store = try #require(setup.outbox.store as? SQLiteOutboxStore)
      let outside = try DatabaseQueue(path: store.file.path)
      try await outside.write { db in
        try db.execute(
          sql: "UPDATE outbox_write SET request = x'00ff' WHERE id = ?", arguments: [kept.id])
      }
      let report = try await setup.sync(force: true)
      #expect(report.rejected.map(\.id) == [kept.id])
      #expect(report.rejected.first?.lastError?.contains("drop it") == true)
      #expect(setup.ratings.applied(to: 4).isEmpty)
      #expect(try await setup.sync(force: true).tried == 0)
    }
  }
}

extension Written {
  /// The kept write, or nil when it was sent.
  var kept: PendingWrite? {
    if case .queued(let write) = self { return write }
    return nil
  }
}

extension OutboxTests {
  /// Two syncs at once never take one write, nor a write behind one the other holds; a lease
  /// that ran out lets another sync take the write.
  @Test(arguments: Kept.allCases)
  func aLeasedWriteIsTakenByOneSyncUntilItsLeaseEnds(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let keeping = setup.writer(api: false)
      let first = try #require(try await keeping.write(try .rate(movie: 3, score: 30)).kept)
      _ = try #require(try await keeping.write(try .rate(movie: 3, score: 31)).kept)
      let other = try #require(try await keeping.write(try .rate(movie: 4, score: 40)).kept)
      let store = setup.outbox.store
      let now = setup.clock.now
      let lease = { (at: Date) in
        try await store.lease(origin: setup.origin, now: at, until: at.addingTimeInterval(60))
      }
      #expect(try await lease(now)?.id == first.id)
      #expect(try await lease(now)?.id == other.id)
      #expect(try await lease(now) == nil)
      #expect(try await lease(now.addingTimeInterval(61))?.id == first.id)
      // Sent, it leaves the outbox, and the write behind it is due.
      try await store.settle(first.id, .sent)
      #expect(try await lease(now.addingTimeInterval(61))?.summary == "a rating of movie 3")
      #expect(try await store.writes().count == 2)
    }
  }
}
