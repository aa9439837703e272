import Domain
import Foundation
import GRDB
import KernelTesting
import MoviesKit
import MoviesTesting
import Observation
import Store
import Testing

@testable import Layers

/// Watching a call as its stored data changes, on both stores: each change once, in order; an
/// entity changed through an item read reaches the watcher of a list holding it; another
/// connection's commit reaches it too; a failed refresh is an element, not the end; cancelling
/// frees the watcher.
@Suite(.timeLimit(.minutes(1))) struct WatchTests {
  enum Kind: String, CaseIterable, Sendable { case memory, sqlite }

  static func store(_ kind: Kind) throws -> any CacheStore {
    kind == .memory ? InMemoryStore() : try SQLiteCacheStore.inMemory()
  }

  static func watchers(_ store: any CacheStore) -> Int {
    (store as? SQLiteCacheStore)?.watchers ?? (store as? InMemoryStore)?.watchers ?? -1
  }

  static func movies(rating two: Double) throws -> [Movie] {
    [
      try Movie.fixture(1, "One", grossing: 30, rating: 10),
      try Movie.fixture(2, "Two", grossing: 20, rating: two),
    ]
  }

  /// The top-grossing list of 2016 as `service` stores it, watched.
  static func watch(_ service: MovieStack, refresh: Bool = false) -> AsyncStream<
    Watched<[Movie]>
  > {
    service.stack.watch(.topGrossingMovies(year: 2016), refresh: refresh)
      ?? AsyncStream { $0.finish() }
  }

  @Test(arguments: Kind.allCases)
  func eachChangeArrivesOnceInOrderEvenThroughAnItemRead(kind: Kind) async throws {
    let store = try Self.store(kind)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let service = try EntitiesTests.layered(store, api)
    var elements = Self.watch(service).makeAsyncIterator()
    #expect(await elements.next() == .nothingStored)

    _ = try await service.topGrossingMovies(year: 2016)
    let first = await elements.next()
    #expect(first?.value == (try Self.movies(rating: 20)))
    if case .answer(let answer) = first { #expect(answer.origin == .cache) }

    // Movie 2 changes through its own item call: the list holding it shows it.
    api.answer(try Self.movies(rating: 99))
    _ = try await service.movie(id: 2)
    #expect(await elements.next()?.value?.map(\.rating) == [10, 99])

    // Stored again unchanged: no element; the next change is the next element.
    _ = try await service.topGrossingMovies(year: 2016)
    api.answer(try Self.movies(rating: 5))
    _ = try await service.topGrossingMovies(year: 2016)
    #expect(await elements.next()?.value?.map(\.rating) == [10, 5])
  }

  @Test(arguments: Kind.allCases)
  func cancellingTheWatchFreesIt(kind: Kind) async throws {
    let store = try Self.store(kind)
    let service = try EntitiesTests.layered(store, ScriptedMovieApi(try Self.movies(rating: 20)))
    let seen = Recorder<Watched<[Movie]>>()
    let watching = Task {
      for await element in Self.watch(service) { seen.append(element) }
    }
    await seen.reach(1)
    #expect(Self.watchers(store) == 1)
    watching.cancel()
    await watching.value
    #expect(Self.watchers(store) == 0)
  }

  @Test(arguments: Kind.allCases)
  func aFailedRefreshIsAnElementAndTheWatchGoesOn(kind: Kind) async throws {
    let store = try Self.store(kind)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let service = try EntitiesTests.layered(store, api)
    _ = try await service.topGrossingMovies(year: 2016)
    api.fail(.unreachable)
    var elements = Self.watch(service, refresh: true).makeAsyncIterator()
    #expect(await elements.next()?.value?.map(\.rating) == [10, 20])
    guard case .failed(let failure) = await elements.next() else {
      Issue.record("the refresh's failure did not arrive")
      return
    }
    #expect(failure.failure == .unreachable)
    api.answer(try Self.movies(rating: 7))
    _ = try await service.topGrossingMovies(year: 2016)
    #expect(await elements.next()?.value?.map(\.rating) == [10, 7])
  }

  /// Another connection to the file (another process's, as `kernel` runs in another terminal)
  /// commits: SQLite's `data_version` tells the watcher within the polling period.
  @Test func anotherConnectionsCommitReachesTheWatcher() async throws {
    let folder = try TemporaryDirectory("watch")
    defer { folder.remove() }
    let watched = try SQLiteCacheStore.open(at: folder.cache)
    let other = try SQLiteCacheStore.open(at: folder.cache)
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    var elements = Self.watch(try EntitiesTests.layered(watched, nil)).makeAsyncIterator()
    #expect(await elements.next() == .nothingStored)
    _ = try await EntitiesTests.layered(other, api).topGrossingMovies(year: 2016)
    #expect(await elements.next()?.value?.map(\.rating) == [10, 20])
    _ = try await other.clear(origin: nil)
    #expect(await elements.next() == .nothingStored)
  }

  /// A row another program damaged: the list with a hole is no answer (a warning names the row),
  /// what the local query still finds is shown, and the watch goes on; the next good answer
  /// shows. A file removed from under the watcher ends the watch with one sentence (whenever the
  /// next poll comes: the test waits for it, it does not race it).
  @Test func aDamagedRowOrAVanishedFileNeverEndsTheWatch() async throws {
    let folder = try TemporaryDirectory("watch")
    defer { folder.remove() }
    let warnings = Recorder<String>()
    let store = try SQLiteCacheStore.open(at: folder.cache, warn: { warnings.append($0) })
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let service = try EntitiesTests.layered(store, api)
    _ = try await service.topGrossingMovies(year: 2016)
    var elements = Self.watch(service).makeAsyncIterator()
    #expect(await elements.next()?.value?.map(\.rating) == [10, 20])

    try await DatabaseQueue(path: folder.cache.path).write { db in
      try db.execute(sql: "UPDATE cache_entry SET payload = 42 WHERE key LIKE '%Movie/2'")
    }
    guard case .answer(let left) = await elements.next() else {
      Issue.record("the damaged list gave no answer of what is left")
      return
    }
    #expect(left.origin == .local && left.value.map(\.id) == [1])
    #expect(warnings.all.contains { $0.contains("Movie/2") }, "\(warnings.all)")

    _ = try await service.topGrossingMovies(year: 2016)
    // The list's row and its local query are read one after the other: a watcher whose read of
    // the damaged list comes just before the commit shows the local query's answer (read just
    // after it) first, then the list's own at the commit's notice.
    var again = await elements.next()
    if case .answer(let local)? = again, local.origin == .local { again = await elements.next() }
    guard case .answer(let restored)? = again else {
      Issue.record("the list stored again gave no answer: \(String(describing: again))")
      return
    }
    #expect(restored.origin == .cache && restored.value.map(\.rating) == [10, 20])

    try FileManager.default.removeItem(at: folder.cache)
    let next = await elements.next()
    guard case .ended(let failure) = next else {
      Issue.record("the watch of a removed file did not end: \(String(describing: next))")
      return
    }
    #expect(failure.description.contains("deleted or replaced"), "\(failure)")
    #expect(await elements.next() == nil)
  }

  /// The model over a watch, as SwiftUI (or any `withObservationTracking` code) sees it.
  @MainActor @Test func anObservableModelFollowsTheWatch() async throws {
    let store = InMemoryStore()
    let api = ScriptedMovieApi(try Self.movies(rating: 20))
    let service = try EntitiesTests.layered(store, api)
    let model = LiveAnswer(Self.watch(service))
    func changed() async {
      await withCheckedContinuation { continuation in
        withObservationTracking {
          _ = model.latest
        } onChange: {
          continuation.resume()
        }
      }
    }
    if model.latest == nil { await changed() }
    #expect(model.latest == .nothingStored)
    async let next: Void = changed()
    _ = try await service.topGrossingMovies(year: 2016)
    await next
    #expect(model.latest?.value?.map(\.rating) == [10, 20])
    model.stop()
  }
}

/// When a watch's refresh asks the api: as the caching layer's policy would.
@Suite struct WatchRefreshPolicyTests {
  @Test(arguments: [
    (CachePolicy.cacheOnly, false), (.cacheFirst(maxAge: .seconds(60)), false),
    (.staleWhileRevalidate(maxAge: .seconds(60)), false), (.networkFirst, true),
    (.networkOnly, true), (.cacheThenNetwork, true),
  ])
  func aFreshCopyIsRefreshedOnlyWhereThePolicySaysSo(policy: CachePolicy, asks: Bool)
    async throws
  {
    let store = InMemoryStore()
    let api = ScriptedMovieApi(try WatchTests.movies(rating: 20))
    _ = try await EntitiesTests.layered(store, api).topGrossingMovies(year: 2016)
    let layer = CachingLayer(store: store, policy: policy, partition: "p")
    let call = ServiceCall<[Movie]>.topGrossingMovies(year: 2016)
    let client = try api.client
    try await layer.refresh(
      call,
      next: Next { offered in
        let response = try await call.response(from: client.offering(offered))
        return Answer(value: response.value, origin: .network, validators: response.validators)
      })
    #expect(api.calls == (asks ? 2 : 1))
  }
}
