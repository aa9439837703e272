import Api
import Composition
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

@Suite(.timeLimit(.minutes(1))) struct LayeredApiTests {
  /// The api movie service for `server`, no retries; its whole-request deadline on `deadline`.
  /// A client of `server`, with no retriers.
  private func client(_ server: FixtureServer, deadline: any Clock<Duration> = ContinuousClock())
    throws -> ApiClient
  {
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    return ApiClient(
      context: context,
      transport: PlatformTransport(configuration: .loopbackTests, clock: deadline), retriers: [])
  }

  /// A client of `server` under one caching layer: each call offered its stored copy's
  /// validators, as a profile's stack is.
  private func layered(
    _ server: FixtureServer, _ policy: CachePolicy, database: SQLiteCacheStore,
    deadline: any Clock<Duration> = ContinuousClock()
  ) throws -> ServiceStack {
    ServiceStack(
      client: try client(server, deadline: deadline),
      layers: [CachingLayer(store: database, policy: policy)])
  }

  @Test func networkFirstFallsBackOnARefusedConnectionWithoutWaiting() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let database = try SQLiteCacheStore.inMemory()
    let deadline = TestClock()
    let service = try layered(server, .networkFirst, database: database, deadline: deadline)
    #expect(try await service.answer(.topGrossingMovies(year: 2016)).value.count == 10)
    await server.stop()

    let movies = try await service.answer(.topGrossingMovies(year: 2016))
    #expect(movies.value.first?.name == "Rogue One: A Star Wars Story")
    #expect(movies.origin == .cache)
    // The fallback came from the refusal itself, not from a deadline passing: the deadline's
    // clock never moved, and the api alone says "connection refused", not "timed out".
    #expect(deadline.now == TestClock.Instant(offset: .zero))
    let direct = await #expect(throws: ApiError.self) {
      try await ServiceCall<[Movie]>.topGrossingMovies(year: 2016)
        .response(from: self.client(server, deadline: deadline))
    }
    guard case .unreachable(_, _, let reason) = direct else {
      Issue.record("expected unreachable, got \(String(describing: direct))")
      return
    }
    #expect(reason == "connection refused")
  }

  /// The api's answer carries its status and header fields with its value, through the caching
  /// layer; the stored copy that answers next carries neither (the store keeps the value and
  /// its validators only), and says so by its origin.
  @Test func anAnswerFromTheApiCarriesItsStatusAndHeaderFields() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    server.handle("GET", "/api/movies/1") { request in
      var response = await server.responder.original(request)
      response.headers["X-RateLimit-Remaining"] = "41"
      response.headers["ETag"] = "\"v1\""
      return response
    }
    let service = try layered(server, .cacheFirst(maxAge: .seconds(60)), database: .inMemory())
    let fresh = try await service.answer(.movie(id: 1))
    let stored = try await service.answer(.movie(id: 1))
    await server.stop()

    #expect(fresh.origin == .network && fresh.status == 200)
    #expect(fresh.headers["x-ratelimit-remaining"] == "41" && fresh.headers["etag"] == "\"v1\"")
    #expect(stored.origin == .cache && stored.status == nil && stored.headers.isEmpty)
    #expect(stored.validators.etag == "\"v1\"" && stored.value == fresh.value)
  }

  @Test func aNotFoundIsNotHiddenByTheCache() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let service = try layered(server, .networkFirst, database: try .inMemory())
    let error = await #expect(throws: ApiError.self) { try await service.answer(.movie(id: 999)) }
    await server.stop()
    #expect(error?.failure == .notFound)
  }

  @Test(arguments: [
    ("ETag", "If-None-Match", "\"v1\""),
    ("Last-Modified", "If-Modified-Since", "Sat, 01 Jul 2017 10:00:00 GMT"),
  ])
  func aStoredCopyIsRevalidatedAndA304ServesItAsNew(
    validator: String, condition: String, value: String
  ) async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let seen = Mutex<[String?]>([])
    server.handle("GET", "/api/movies/1") { request in
      seen.withLock { $0.append(request.headers[condition.lowercased()]) }
      if request.headers[condition.lowercased()] == value { return SampleResponse(status: 304) }
      var response = await server.responder.original(request)
      response.headers[validator] = value
      return response
    }
    let clock = TestWallClock()
    let layer = CachingLayer(
      store: try SQLiteCacheStore.inMemory(), policy: .cacheFirst(maxAge: .seconds(60)),
      clock: clock.wallClock)
    let service = ServiceStack(client: try client(server), layers: [layer])

    let first = try await service.answer(.movie(id: 1)).value
    clock.advance(600)
    let second = try await service.answer(.movie(id: 1))
    await server.stop()

    #expect(second.value == first)
    #expect(seen.withLock { $0 } == [nil, value])
    #expect(second.origin == .cache && second.age == 0)
  }

  /// A token refresh made inside a call whose cached copy's validators are offered is a request
  /// of its own: it carries no `If-None-Match`, succeeds, and the replayed call is still
  /// conditional (a 304 serves the copy).
  @Test func aRefreshInsideAConditionalCallCarriesNoValidatorsOfThatCall() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    let server = try await FixtureServer.start(options: options, routes: .sampleMovies())
    let conditions = Mutex<[String: [String?]]>([:])
    server.handle("GET", "/api/auth") { request in
      conditions.withLock { $0["auth", default: []].append(request.headers["if-none-match"]) }
      return await server.responder.original(request)
    }
    server.handle("GET", "/api/movies/1") { request in
      let condition = request.headers["if-none-match"]
      conditions.withLock { $0["movie", default: []].append(condition) }
      var response = await server.responder.original(request)
      guard response.status == 200 else { return response }
      if condition == "\"v1\"" { return SampleResponse(status: 304) }
      response.headers["ETag"] = "\"v1\""
      return response
    }
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    let client = ApiClient(
      context: context, transport: PlatformTransport(configuration: .loopbackTests),
      authentication: .plainToken(),
      retriers: [])
    let clock = TestWallClock()
    let service = ServiceStack(
      client: client,
      layers: [
        CachingLayer(
          store: try SQLiteCacheStore.inMemory(), policy: .cacheFirst(maxAge: .seconds(60)),
          clock: clock.wallClock)
      ])

    try await client.login()
    let first = try await service.answer(.movie(id: 1)).value
    clock.advance(600)
    server.responder.expireTokens()
    let second = try await service.answer(.movie(id: 1))
    await server.stop()

    #expect(second.value == first)
    #expect(second.origin == .cache && second.age == 0)
    // The login, then the refresh the 401 set off: neither carried the movie's validators.
    #expect(conditions.withLock { $0["auth"] } == [nil, nil])
    // Three requests: the first; the conditional one, refused (401) before any handler; its
    // replay with the new token, still conditional, answered 304.
    #expect(server.responder.requests(to: "movies/1") == 3)
    #expect(conditions.withLock { $0["movie"] } == [nil, "\"v1\""])
  }
}
