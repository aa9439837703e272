import Domain
import Foundation
import KernelTesting
import Store
import Testing

@Suite(.timeLimit(.minutes(1))) struct CachingLayerTests {
  private let dory: Movie
  private let civilWar: Movie

  init() throws {
    dory = try movie(1, "Finding Dory", grossing: 486, rating: 77)
    civilWar = try movie(3, "Captain America: Civil War", grossing: 408, rating: 75)
  }

  /// A layered service over `base` with one caching layer, and what it recorded.
  private func layered(
    _ base: ScriptedMovieService, _ policy: CachePolicy, database: CacheDatabase? = nil,
    clock: TestWallClock = TestWallClock()
  ) throws -> (LayeredMovieService, CacheDatabase) {
    let database = try database ?? CacheDatabase.inMemory()
    let layer = CachingLayer(database: database, policy: policy, now: clock.read)
    return (LayeredMovieService(base: base, layers: [layer]), database)
  }

  /// `body`'s value and where it came from.
  private func traced<T>(_ body: () async throws -> T) async throws -> (T, Provenance.Recorder) {
    let recorder = Provenance.Recorder()
    let value = try await Provenance.$recorder.withValue(recorder) { try await body() }
    return (value, recorder)
  }

  @Test func offlineAnswersAfterTheBaseHasGoneAway() async throws {
    let base = ScriptedMovieService([dory, civilWar])
    let (service, database) = try layered(base, .networkFirst)
    _ = try await service.topGrossingMovies(year: 2016)
    base.fail(.unreachable)

    let (movies, trace) = try await traced { try await service.topGrossingMovies(year: 2016) }
    #expect(movies.map(\.id) == [1, 3])
    #expect(trace.origin == "cache")
    let offline = OfflineMovieService(store: MovieStore(database: database))
    #expect(try await offline.movie(id: 3) == civilWar)
  }

  @Test(arguments: [ServiceFailure.unreachable, .unavailable])
  func networkFirstFallsBackWhenTheBaseCannotAnswer(failure: ServiceFailure) async throws {
    let base = ScriptedMovieService([dory])
    let (service, _) = try layered(base, .networkFirst)
    _ = try await service.movie(id: 1)
    base.fail(failure)
    let (movie, trace) = try await traced { try await service.movie(id: 1) }
    #expect(movie == dory)
    #expect(trace.origin == "cache")
  }

  @Test(arguments: [ServiceFailure.rejected, .authentication, .badData])
  func networkFirstDoesNotHideARefusalOrBadData(failure: ServiceFailure) async throws {
    let base = ScriptedMovieService([dory])
    let (service, database) = try layered(base, .networkFirst)
    _ = try await service.movie(id: 1)
    base.fail(failure)
    await #expect(throws: ScriptedMovieService.Failure.self) { try await service.movie(id: 1) }
    // Nothing stored was lost.
    #expect(try MovieStore(database: database).movie(id: 1)?.movie == dory)
  }

  @Test func networkFirstWithNothingStoredSurfacesTheFailure() async throws {
    let base = ScriptedMovieService()
    base.fail(.unreachable)
    let (service, _) = try layered(base, .networkFirst)
    let error = await #expect(throws: ScriptedMovieService.Failure.self) {
      try await service.movie(id: 1)
    }
    #expect(error?.failure == .unreachable)
  }

  @Test func cacheOnlyNeverAsksTheBase() async throws {
    let database = try CacheDatabase.inMemory()
    try MovieStore(database: database).store([dory])
    let base = ScriptedMovieService([civilWar])
    let (service, _) = try layered(base, .cacheOnly, database: database)
    #expect(try await service.movie(id: 1) == dory)
    let miss = await #expect(throws: CacheMiss.self) { try await service.movie(id: 3) }
    #expect(miss?.what == "movie 3")
    #expect(base.calls == 0)
  }

  @Test func networkOnlyAlwaysAsksAndStores() async throws {
    let base = ScriptedMovieService([dory])
    let (service, database) = try layered(base, .networkOnly)
    _ = try await service.movie(id: 1)
    _ = try await service.movie(id: 1)
    #expect(base.calls == 2)
    #expect(try MovieStore(database: database).movie(id: 1)?.movie == dory)
  }

  @Test func cacheFirstUsesAFreshCopyAndRefreshesAStaleOne() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieService([dory])
    let (service, _) = try layered(base, .cacheFirst(maxAge: .seconds(60)), clock: clock)
    _ = try await service.movie(id: 1)
    clock.advance(30)
    let (_, fresh) = try await traced { try await service.movie(id: 1) }
    #expect(base.calls == 1)
    #expect(fresh.all == [Provenance(origin: .cache, age: 30)])

    clock.advance(60)
    let renamed = try movie(1, "Finding Dory (renamed)")
    base.answer([renamed])
    #expect(try await service.movie(id: 1) == renamed)
    #expect(base.calls == 2)

    clock.advance(120)
    base.fail(.unreachable)
    let (stale, trace) = try await traced { try await service.movie(id: 1) }
    #expect(stale == renamed)
    #expect(trace.all == [Provenance(origin: .cache, age: 120)])
  }

  @Test func cacheThenNetworkYieldsTheCopyThenTheAnswerEachTagged() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieService([dory])
    let (_, database) = try layered(base, .cacheThenNetwork, clock: clock)
    let layer = CachingLayer(database: database, policy: .cacheThenNetwork, now: clock.read)

    var first: [Cached<Movie>] = []
    for try await update in layer.updates(.movie(id: 1), next: { try await base.movie(id: 1) }) {
      first.append(update)
    }
    #expect(first.map(\.origin) == [.network])

    clock.advance(300)
    let renamed = try movie(1, "Dory again")
    base.answer([renamed])
    var second: [Cached<Movie>] = []
    for try await update in layer.updates(.movie(id: 1), next: { try await base.movie(id: 1) }) {
      second.append(update)
    }
    #expect(second.map(\.origin) == [.cache, .network])
    #expect(second.map(\.value) == [dory, renamed])
    #expect(second.map(\.age) == [300, 0])

    var third: [Cached<Movie>] = []
    for try await update in layer.updates(.movie(id: 1), next: { try await base.movie(id: 1) }) {
      third.append(update)
    }
    #expect(third.map(\.origin) == [.cache])  // the answer equals the copy: one update only
  }

  @Test func cacheThenNetworkAsASingleValueReturnsOnce() async throws {
    let base = ScriptedMovieService([dory])
    let (service, _) = try layered(base, .cacheThenNetwork)
    _ = try await service.movie(id: 1)
    let (value, trace) = try await traced { try await service.movie(id: 1) }
    #expect(value == dory)
    #expect(trace.all.count == 1)
  }

  @Test func staleWhileRevalidateAnswersAtOnceAndRefreshesBehind() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieService([dory])
    let database = try CacheDatabase.inMemory()
    let layer = CachingLayer(
      database: database, policy: .staleWhileRevalidate(maxAge: .seconds(60)), now: clock.read)
    let service = LayeredMovieService(base: base, layers: [layer])
    _ = try await service.movie(id: 1)
    clock.advance(90)
    let renamed = try movie(1, "Dory, revalidated")
    base.answer([renamed])

    let (stale, trace) = try await traced { try await service.movie(id: 1) }
    #expect(stale == dory)
    #expect(trace.all == [Provenance(origin: .cache, age: 90)])
    // The refresh runs behind the answer; wait for it to land in the store.
    await layer.settle()
    #expect(try MovieStore(database: database).movie(id: 1)?.movie == renamed)
    #expect(base.calls == 2)
  }

  @Test func aFailedCallNeverDeletesAndAFailedWriteStoresNothing() async throws {
    let base = ScriptedMovieService([dory, civilWar])
    let (service, database) = try layered(base, .networkFirst)
    _ = try await service.topGrossingMovies(year: 2016)
    base.fail(.badData)
    await #expect(throws: ScriptedMovieService.Failure.self) {
      try await service.topGrossingMovies(year: 2016)
    }
    #expect(try MovieStore(database: database).count() == 2)
  }

  @Test func listsStoredByOneOperationServeAnother() async throws {
    let base = ScriptedMovieService([dory, civilWar])
    let (service, database) = try layered(base, .networkFirst)
    _ = try await service.movie(id: 1)
    _ = try await service.movie(id: 3)
    let (cacheOnly, _) = try layered(base, .cacheOnly, database: database)
    #expect(try await cacheOnly.topRatedMovies(year: 2016).map(\.id) == [1, 3])
  }
}
