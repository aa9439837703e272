import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Store
import Testing

/// Every cache policy, against every state of the store and every behaviour of the api, for a
/// single item and for a list, on both cache stores: the value, its origin and age, and whether
/// the api was asked.
@Suite struct PolicyMatrixTests {
  enum StoreKind: String, CaseIterable, Sendable { case memory, sqlite }
  enum Stored: String, CaseIterable, Sendable { case nothing, fresh, stale, byAnotherCall }
  enum Api: String, CaseIterable, Sendable { case answers, down, notModified, badData }
  enum Shape: String, CaseIterable, Sendable { case item, list }

  static let policies: [CachePolicy] = [
    .cacheOnly, .networkOnly, .cacheFirst(maxAge: .seconds(60)), .networkFirst,
    .cacheThenNetwork, .staleWhileRevalidate(maxAge: .seconds(60)),
  ]

  struct Case: Sendable, CustomTestStringConvertible {
    let store: StoreKind
    let policy: CachePolicy
    let stored: Stored
    let api: Api
    let shape: Shape

    var testDescription: String {
      "\(policy), \(stored.rawValue) stored, api \(api.rawValue), \(shape.rawValue), \(store.rawValue)"
    }

    static var all: [Case] {
      StoreKind.allCases.flatMap { store in
        policies.flatMap { policy in
          Stored.allCases.flatMap { stored in
            Api.allCases.flatMap { api in
              Shape.allCases.map {
                Case(store: store, policy: policy, stored: stored, api: api, shape: $0)
              }
            }
          }
        }
      }
    }
  }

  /// Which copy came back: the one stored before (or the api's same one), the api's new one, or
  /// what a local query found among the stored movies (movie 1 alone, stored by its item call).
  enum Copy: Equatable { case old, new, local }

  /// What the policy means, written as its documentation says it.
  struct Expected: Equatable {
    var copy: Copy?  // nil: the call fails
    var origin: ResultOrigin?
    var age: TimeInterval?
    var apiCalled: Bool
  }

  /// Whether the call has a copy of its own: stored by itself, or (an item) its entity stored
  /// by another call, a list that held it.
  static func hasOwnCopy(_ c: Case) -> Bool {
    c.stored == .fresh || c.stored == .stale || (c.stored == .byAnotherCall && c.shape == .item)
  }

  static func expected(_ c: Case) -> Expected {
    let own = hasOwnCopy(c)
    // A list never stored, with movies of its year stored by another call: its local query.
    let local = c.stored == .byAnotherCall && c.shape == .list
    let age: TimeInterval = c.stored == .stale ? 600 : 30
    let cached = Expected(copy: .old, origin: .cache, age: age, apiCalled: false)
    let queried = Expected(copy: .local, origin: .local, age: 30, apiCalled: true)
    let failure = Expected(copy: nil, origin: nil, age: nil, apiCalled: true)
    /// Asking the api, falling back to the own copy (or the local query) when it is down. An
    /// api with nothing new says 304 to a copy's validators (offered when the policy may fall
    /// back on it, and only a copy the call stored itself has them; a list's movies have none)
    /// and sends the same movies to a request without.
    func ask(fallBack: Bool) -> Expected {
      switch c.api {
      case .answers: return Expected(copy: .new, origin: .network, age: 0, apiCalled: true)
      case .down:
        if own && fallBack {
          return Expected(copy: .old, origin: .cache, age: age, apiCalled: true)
        }
        return local && fallBack ? queried : failure
      case .notModified:
        if fallBack && (c.stored == .fresh || c.stored == .stale) {
          return Expected(copy: .old, origin: .cache, age: 0, apiCalled: true)
        }
        return Expected(copy: .old, origin: .network, age: 0, apiCalled: true)
      case .badData: return failure
      }
    }
    let fresh = c.stored == .fresh || (own && c.stored == .byAnotherCall)
    switch c.policy {
    case .cacheOnly:
      if own { return cached }
      return local
        ? Expected(copy: .local, origin: .local, age: 30, apiCalled: false)
        : Expected(copy: nil, origin: nil, age: nil, apiCalled: false)
    case .networkOnly:
      return ask(fallBack: false)
    case .cacheFirst:
      return fresh ? cached : ask(fallBack: true)
    case .networkFirst, .cacheThenNetwork:
      return ask(fallBack: true)
    case .staleWhileRevalidate:
      if fresh { return cached }
      // A stale copy is answered at once; the api is asked behind it.
      if c.stored == .stale {
        return Expected(copy: .old, origin: .cache, age: 600, apiCalled: true)
      }
      return ask(fallBack: true)
    }
  }

  @Test(arguments: Case.all)
  func policyMeansWhatItSays(_ c: Case) async throws {
    let clock = TestWallClock()
    let store: any CacheStore =
      c.store == .memory ? InMemoryStore() : try SQLiteCacheStore.inMemory()
    let old = [
      try Movie.fixture(1, "Old one", grossing: 20), try Movie.fixture(2, "Old two", grossing: 10),
    ]
    let new = [
      try Movie.fixture(1, "New one", grossing: 20), try Movie.fixture(2, "New two", grossing: 10),
    ]

    // What was stored before, through the layer itself.
    let tag = "\"v1\""
    let seeding = try MovieStack(
      api: ScriptedMovieApi(old, etag: tag),
      layers: [CachingLayer(store: store, policy: .networkOnly, clock: clock.wallClock)])
    switch (c.stored, c.shape) {
    case (.nothing, _): break
    case (.fresh, .item), (.stale, .item), (.byAnotherCall, .list):
      _ = try await seeding.movie(id: 1)
    case (.fresh, .list), (.stale, .list), (.byAnotherCall, .item):
      _ = try await seeding.topGrossingMovies(year: 2016)
    }
    clock.advance(c.stored == .stale ? 600 : 30)

    // With nothing new, the api has the movies stored before, under the same ETag.
    let api = c.api == .notModified ? ScriptedMovieApi(old, etag: tag) : ScriptedMovieApi(new)
    switch c.api {
    case .answers, .notModified: break
    case .down: api.fail(.unreachable)
    case .badData: api.fail(.badData)
    }
    let background = BackgroundWork()
    let layer = CachingLayer(
      store: store, policy: c.policy, clock: clock.wallClock, background: background)
    // What a command printing early answers is handed first (`ServiceStack.answer(_:early:)`).
    let stack = LayerStack([layer])
    let early: String? =
      switch c.shape {
      case .item:
        (try? await stack.stored(ServiceCall<Movie>.movie(id: 1))).flatMap(\.self).map(Self.seen)
      case .list:
        (try? await stack.stored(.topGrossingMovies(year: 2016))).flatMap(\.self).map(Self.seen)
      }
    let service = try MovieStack(api: api, layers: [layer]).stack
    let answer = await Result(catching: { () async throws -> Answer<[Movie]> in
      switch c.shape {
      case .item: try await service.answer(.movie(id: 1)).map { [$0] }
      case .list: try await service.answer(.topGrossingMovies(year: 2016))
      }
    })
    let result = answer.map(\.value)
    await background.settle()

    let expectation = Self.expected(c)
    let wanted: [Movie]? =
      switch expectation.copy {
      case .old?: c.shape == .item ? [old[0]] : old
      case .new?: c.shape == .item ? [new[0]] : new
      case .local?: [old[0]]
      case nil: nil
      }
    #expect((try? result.get()) == wanted)
    let provenance = (try? answer.get()).map { [Self.seen($0)] } ?? []
    if let origin = expectation.origin, let age = expectation.age {
      #expect(provenance == ["\(origin) \(age)"])
    } else {
      #expect(provenance.isEmpty)
    }
    #expect((api.calls > 0) == expectation.apiCalled)
    // cacheThenNetwork hands over its own stored copy first; nothing else does.
    let own = Self.hasOwnCopy(c)
    #expect(
      (early.map { [$0] } ?? [])
        == (c.policy == .cacheThenNetwork && own
          ? ["cache \(c.stored == .stale ? 600.0 : 30.0)"] : []))
  }

  /// Where an answer came from and how old it is (`cache 30.0`).
  static func seen<T>(_ answer: Answer<T>) -> String { "\(answer.origin) \(answer.age)" }
}

extension Result where Failure == any Error {
  init(catching body: () async throws -> Success) async {
    do { self = .success(try await body()) } catch { self = .failure(error) }
  }
}
