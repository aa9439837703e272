import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Synchronization
import Testing

/// A cache store whose reads or writes fail, as a full or locked disk makes them.
private final class FailingStore: CacheStore {
  struct Failure: Error, CustomStringConvertible {
    let description: String
  }
  let inner = InMemoryStore()
  let failReads: Bool
  let writes = Counter()

  init(failReads: Bool = false) { self.failReads = failReads }

  func entry(for key: String) async throws -> CacheEntry? {
    if failReads {
      throw Failure(description: "The cache /tmp/x could not be read: it is damaged.")
    }
    return try await inner.entry(for: key)
  }
  func store(_ entry: CacheEntry) async throws {
    writes.increment()
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  func remove(_ key: String) async throws {
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  func settleEdit(of key: String, _ settlement: EditSettlement) async throws {
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  func pendingKeys() async throws -> [String] { try await inner.pendingKeys() }
  func apply(_ changes: StoredChanges) async throws -> Bool {
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool {
    throw Failure(description: "The cache /tmp/x could not be written: the disk is full.")
  }
  /// Nothing it is asked changes it.
  func changes() -> AsyncThrowingStream<Void, any Error> { AsyncThrowingStream { $0.finish() } }
}

@Suite(.timeLimit(.minutes(1))) struct CachingLayerTests {
  private let dory: Movie
  private let civilWar: Movie

  init() throws {
    dory = try Movie.fixture(1, "Finding Dory", grossing: 486, rating: 77)
    civilWar = try Movie.fixture(3, "Captain America: Civil War", grossing: 408, rating: 75)
  }

  /// What `service` answered `call`, and where it came from and how old it is (`cache 90.0`).
  private func traced<T: Sendable>(_ service: MovieStack, _ call: ServiceCall<T>)
    async throws -> (T, String)
  {
    let answer = try await service.stack.answer(call)
    return (answer.value, "\(answer.origin) \(answer.age)")
  }

  @Test func aListIsNeverAnsweredFromWhatAnotherCallStored() async throws {
    let base = ScriptedMovieApi([dory, civilWar])
    let layer = CachingLayer(
      store: InMemoryStore(), policy: .cacheFirst(maxAge: .seconds(300)))
    let service = try MovieStack(api: base, layers: [layer])
    _ = try await service.movie(id: 1)
    let (list, trace) = try await traced(service, .topGrossingMovies(year: 2016))
    #expect(list == [dory, civilWar])
    #expect(trace == "network 0.0")
    #expect(base.calls == 2)
  }

  @Test func onePartitionsCopyNeverAnswersForAnotherNorOffersItsValidators() async throws {
    let store = InMemoryStore()
    let staging = ScriptedMovieApi([dory], etag: "\"v1\"")
    let stagingLayer = CachingLayer(
      store: store, policy: .networkFirst, partition: "https://staging.example:443")
    _ = try await MovieStack(api: staging, layers: [stagingLayer]).movie(id: 1)

    // Movie 1 as production has it: another copy of the same movie.
    let productionDory = try Movie.fixture(1, "Finding Dory (production)")
    let production = ScriptedMovieApi([productionDory], etag: "\"v1\"")
    let productionLayer = CachingLayer(
      store: store, policy: .cacheOnly, partition: "https://api.example:443")
    let offline = try MovieStack(api: nil, layers: [productionLayer])
    await #expect(throws: LayerError.miss(what: "movie 1")) { try await offline.movie(id: 1) }

    let layered = try MovieStack(
      api: production,
      layers: [
        CachingLayer(store: store, policy: .networkFirst, partition: "https://api.example:443")
      ])
    #expect(try await layered.movie(id: 1) == productionDory)
    #expect(production.offered == [nil])  // staging's ETag was not offered
    #expect(try await offline.movie(id: 1) == productionDory)
  }

  @Test func cacheThenNetworkGivesTheCopyThenTheAnswerEachTagged() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieApi([dory])
    let stack = try MovieStack(
      api: base,
      layers: [
        CachingLayer(store: InMemoryStore(), policy: .cacheThenNetwork, clock: clock.wallClock)
      ]
    ).stack
    /// The stored copy handed over first (`early`), then the api's answer.
    func updates() async throws -> [Answer<Movie>] {
      let early = Mutex<[Answer<Movie>]>([])
      let answer = try await stack.answer(.movie(id: 1)) { copy in early.withLock { $0 = [copy] } }
      return early.withLock { $0 } + [answer]
    }
    #expect(try await updates().map(\.origin) == [.network])

    clock.advance(300)
    let renamed = try Movie.fixture(1, "Dory again")
    base.answer([renamed])
    let second = try await updates()
    #expect(second.map(\.origin) == [.cache, .network])
    #expect(second.map(\.value) == [dory, renamed])
    #expect(second.map(\.age) == [300, 0])
    // The copy is the api's answer of a moment ago.
    #expect(try await updates().map(\.value) == [renamed, renamed])
  }

  @Test func staleWhileRevalidateStoresItsRefreshOnceSettled() async throws {
    let clock = TestWallClock()
    let store = InMemoryStore()
    let base = ScriptedMovieApi([dory])
    let layer = CachingLayer(
      store: store, policy: .staleWhileRevalidate(maxAge: .seconds(60)), clock: clock.wallClock)
    let service = try MovieStack(api: base, layers: [layer])
    _ = try await service.movie(id: 1)
    clock.advance(90)
    let renamed = try Movie.fixture(1, "Dory, revalidated")
    base.answer([renamed])

    let (stale, trace) = try await traced(service, .movie(id: 1))
    #expect(stale == dory)
    #expect(trace == "cache 90.0")
    await layer.settle()
    #expect(base.calls == 2)
    let (fresh, after) = try await traced(service, .movie(id: 1))
    #expect(fresh == renamed)
    #expect(after == "cache 0.0")
  }

  @Test func backgroundWorkThatOutlastsItsLimitIsCancelled() async throws {
    let clock = TestClock()
    let work = BackgroundWork()
    let cancelled = Counter()
    work.start {
      do { try await clock.sleep(for: .seconds(3600)) } catch { cancelled.increment() }
    }
    async let finished = work.settle(within: .seconds(5), on: clock)
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(5))
    #expect(await finished == false)
    await cancelled.reach(1)
    #expect(cancelled.value == 1)
  }

  @Test func aFailedWriteKeepsTheAnswerAndWarnsOncePerCause() async throws {
    let store = FailingStore()
    let warnings = Recorder<String>()
    let layer = CachingLayer(store: store, policy: .networkFirst, warn: warnings.append)
    let service = try MovieStack(api: ScriptedMovieApi([dory, civilWar]), layers: [layer])
    #expect(try await service.movie(id: 1) == dory)
    #expect(try await service.movie(id: 3) == civilWar)
    #expect(store.writes.value == 2)
    #expect(
      warnings.all == [
        "The cache /tmp/x could not be written: the disk is full; the answer is shown but was not kept."
      ])
  }

  @Test func anUnreadableStoreIsAskedAroundUnlessOnlyTheCacheMayAnswer() async throws {
    let warnings = Recorder<String>()
    let layered = try MovieStack(
      api: ScriptedMovieApi([dory]),
      layers: [
        CachingLayer(
          store: FailingStore(failReads: true), policy: .networkFirst, warn: warnings.append)
      ])
    #expect(try await layered.movie(id: 1) == dory)
    #expect(warnings.all.first?.hasSuffix("it is damaged; asking the api instead.") == true)

    let offline = try MovieStack(
      api: nil, layers: [CachingLayer(store: FailingStore(failReads: true), policy: .cacheOnly)])
    await #expect(throws: FailingStore.Failure.self) { try await offline.movie(id: 1) }
  }

  @Test func theCopysValidatorsAreOfferedAndA304RenewsIt() async throws {
    let clock = TestWallClock()
    let base = ScriptedMovieApi([dory], etag: "\"v1\"")
    let service = try MovieStack(
      api: base,
      layers: [
        CachingLayer(store: InMemoryStore(), policy: .networkFirst, clock: clock.wallClock)
      ])
    _ = try await service.movie(id: 1)
    clock.advance(500)
    let (copy, trace) = try await traced(service, .movie(id: 1))
    #expect(copy == dory)
    #expect(trace == "cache 0.0")
    #expect(base.offered == [nil, "\"v1\""])
  }

  @Test func aStoreOnlyStackWithNothingStoredIsACacheMiss() async throws {
    let offline = try MovieStack(
      api: nil, layers: [CachingLayer(store: InMemoryStore(), policy: .networkFirst)])
    await #expect(throws: LayerError.miss(what: "the top-rated movies of 2016")) {
      try await offline.topRatedMovies(year: 2016)
    }
  }

  @Test func anAnswerACacheBelowGaveKeepsItsAgeAndIsNotStoredAsNew() async throws {
    let clock = TestWallClock()
    let inner = InMemoryStore()
    let outer = InMemoryStore()
    let below = try MovieStack(
      api: ScriptedMovieApi([dory]),
      layers: [CachingLayer(store: inner, policy: .networkFirst, clock: clock.wallClock)])
    _ = try await below.movie(id: 1)
    clock.advance(40)
    let above = try MovieStack(
      api: nil,
      layers: [
        CachingLayer(store: outer, policy: .networkFirst, clock: clock.wallClock),
        CachingLayer(store: inner, policy: .cacheOnly, clock: clock.wallClock),
      ])
    let (movie, trace) = try await traced(above, .movie(id: 1))
    #expect(movie == dory)
    #expect(trace == "cache 40.0")
    #expect(try await outer.statistics().entries == 0)
  }
}
