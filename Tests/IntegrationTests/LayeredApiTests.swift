import Api
import Domain
import Foundation
import KernelTesting
import Layers
import SampleApi
import Store
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct LayeredApiTests {
  /// The api movie service for `server`, no retries; its whole-request deadline on `deadline`.
  private func api(_ server: FixtureServer, deadline: any Clock<Duration> = ContinuousClock())
    throws -> ApiMovieService
  {
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    return ApiMovieService(
      client: ApiClient(
        context: context, transport: PlatformTransport(clock: deadline), retriers: []))
  }

  /// That api service under one caching layer.
  private func layered(
    _ server: FixtureServer, _ policy: CachePolicy, database: SQLiteCacheStore,
    deadline: any Clock<Duration> = ContinuousClock()
  ) throws -> LayeredMovieService {
    LayeredMovieService(
      base: try api(server, deadline: deadline),
      layers: [CachingLayer(store: database, policy: policy)])
  }

  @Test func networkFirstFallsBackOnARefusedConnectionWithoutWaiting() async throws {
    let server = try await FixtureServer.start()
    let database = try SQLiteCacheStore.inMemory()
    let deadline = TestClock()
    let service = try layered(server, .networkFirst, database: database, deadline: deadline)
    #expect(try await service.topGrossingMovies(year: 2016).count == 10)
    await server.stop()

    let recorder = Provenance.Recorder()
    let movies = try await Provenance.$recorder.withValue(recorder) {
      try await service.topGrossingMovies(year: 2016)
    }
    #expect(movies.first?.name == "Rogue One: A Star Wars Story")
    #expect(recorder.origin == "cache")
    // The fallback came from the refusal itself, not from a deadline passing: the deadline's
    // clock never moved, and the api alone says "connection refused", not "timed out".
    #expect(deadline.now == TestClock.Instant(offset: .zero))
    let direct = await #expect(throws: ApiError.self) {
      try await self.api(server, deadline: deadline).topGrossingMovies(year: 2016)
    }
    guard case .unreachable(_, _, let reason) = direct else {
      Issue.record("expected unreachable, got \(String(describing: direct))")
      return
    }
    #expect(reason == "connection refused")
  }

  @Test func aNotFoundIsNotHiddenByTheCache() async throws {
    let server = try await FixtureServer.start()
    let service = try layered(server, .networkFirst, database: try .inMemory())
    let error = await #expect(throws: ApiError.self) { try await service.movie(id: 999) }
    await server.stop()
    #expect(error?.failure == .rejected)
  }

  @Test(arguments: [
    ("ETag", "If-None-Match", "\"v1\""),
    ("Last-Modified", "If-Modified-Since", "Sat, 01 Jul 2017 10:00:00 GMT"),
  ])
  func aStoredCopyIsRevalidatedAndA304ServesItAsNew(
    validator: String, condition: String, value: String
  ) async throws {
    let server = try await FixtureServer.start()
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
    let service = LayeredMovieService(base: try api(server), layers: [layer])

    let first = try await service.movie(id: 1)
    clock.advance(600)
    let recorder = Provenance.Recorder()
    let second = try await Provenance.$recorder.withValue(recorder) {
      try await service.movie(id: 1)
    }
    await server.stop()

    #expect(second == first)
    #expect(seen.withLock { $0 } == [nil, value])
    #expect(recorder.all.last == Provenance(origin: .cache, age: 0))
  }
}
