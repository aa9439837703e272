import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Store
import Synchronization
import Testing

/// Two kept writes of one movie, on real SQLite files over loopback: settling one shows what
/// the other makes of the api's copy, and an edit no kept write stands behind is undone.
extension OutboxTests {
  /// Movie 9 stored from the api: its rating, and the key of its stored copy.
  func stored(_ setup: Setup) async throws -> (rating: Double, key: String) {
    let cached = ServiceStack(
      client: setup.api.client,
      layers: [CachingLayer(store: setup.cache, policy: .networkFirst, partition: setup.origin)])
    let movie = try await cached.answer(.movie(id: 9)).value
    return (movie.rating, setup.origin + " " + ServiceCall<Movie>.movie(id: 9).key)
  }

  private func shown(_ setup: Setup, _ key: String) async throws -> (Double?, Bool?) {
    let entry = try await setup.cache.entry(for: key)
    let codec = try #require(ServiceCall<Movie>.movie(id: 9).codec)
    let movie = try entry.map { try codec.decode($0.payload) }
    return (movie?.rating, entry?.isPending)
  }

  @Test(arguments: [0, 1], Kept.allCases)
  func droppingOneOfTwoKeptEditsShowsWhatTheOtherMakesOfTheApisCopy(dropped: Int, keptIn kept: Kept)
    async throws
  {
    try await withSetup(keptIn: kept) { setup in
      let (apiRating, key) = try await stored(setup)
      let keeping = setup.writer(api: false)
      var kept: [PendingWrite] = []
      for score in [80, 90] {
        kept.append(try #require(try await keeping.write(try .rate(movie: 9, score: score)).kept))
      }
      #expect(try await shown(setup, key) == (90, true))
      _ = try await setup.outbox.drop(kept[dropped].id, cache: setup.cache)
      #expect(try await shown(setup, key) == (dropped == 0 ? 90 : 80, true))
      _ = try await setup.outbox.drop(kept[1 - dropped].id, cache: setup.cache)
      #expect(try await shown(setup, key) == (apiRating, false))
    }
  }

  @Test(arguments: Kept.allCases)
  func aWriteTheApiTookLeavesTheOtherKeptEditShowing(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let (_, key) = try await stored(setup)
      let keeping = setup.writer(api: false)
      let second = Counter()
      let responder = setup.api.responder
      responder.handle("POST", "/api/movies/{id}/ratings") { request in
        if second.increment() == 2 { return .error(503, "down for maintenance") }
        return await responder.original(request)
      }
      _ = try await keeping.write(try .rate(movie: 9, score: 80))
      let later = try #require(try await keeping.write(try .rate(movie: 9, score: 90)).kept)
      let report = try await setup.sync()
      #expect(report.sent.count == 1 && report.failed.count == 1)
      // The first is the api's now; the second still shows, on top of it.
      #expect(try await shown(setup, key) == (90, true))
      _ = try await setup.outbox.drop(later.id, cache: setup.cache)
      #expect(try await shown(setup, key) == (80, false))
      #expect(try await setup.cache.entry(for: key)?.isStale == true)
    }
  }

  @Test(arguments: Kept.allCases)
  func anEditNoKeptWriteStandsBehindIsUndoneAndALostOneMadeAgain(keptIn kept: Kept) async throws {
    try await withSetup(keptIn: kept) { setup in
      let (apiRating, key) = try await stored(setup)
      _ = try await setup.writer(api: false).write(try .rate(movie: 9, score: 80))
      let kept = try await setup.outbox.store.writes()
      #expect(try await setup.outbox.reconcile(setup.cache, writes: kept) == ([], []))
      #expect(try await shown(setup, key) == (80, true))
      // The outbox's file gone: no write stands behind the edit.
      #expect(try await setup.outbox.reconcile(setup.cache, writes: []).undone == [key])
      #expect(try await shown(setup, key) == (apiRating, false))
      #expect(try await setup.cache.pendingKeys().isEmpty)
      // The write still kept, its edit not stored (a run stopped between the two): made again.
      #expect(try await setup.outbox.reconcile(setup.cache, writes: kept) == ([], [key]))
      #expect(try await shown(setup, key) == (80, true))
    }
  }
}
