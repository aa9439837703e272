import Api
import Domain
import Foundation
import SampleApi
import Store
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct LayeredApiTests {
  /// The api movie service for `server`, no retries, under one caching layer.
  private func layered(
    _ server: FixtureServer, _ policy: CachePolicy, database: CacheDatabase
  ) throws -> LayeredMovieService {
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    let api = ApiMovieService(
      client: ApiClient(context: context, transport: URLSessionTransport(), retriers: []))
    return LayeredMovieService(
      base: api, layers: [CachingLayer(database: database, policy: policy)])
  }

  @Test func networkFirstFallsBackOnARefusedConnectionWithoutWaiting() async throws {
    let server = try await FixtureServer.start()
    let database = try CacheDatabase.inMemory()
    let service = try layered(server, .networkFirst, database: database)
    #expect(try await service.topGrossingMovies(year: 2016).count == 10)
    await server.stop()

    let started = ContinuousClock.now
    let recorder = Provenance.Recorder()
    let movies = try await Provenance.$recorder.withValue(recorder) {
      try await service.topGrossingMovies(year: 2016)
    }
    // A refused connection is not waited on: far below the 30 s request timeout. (It takes
    // under 100 ms on a quiet machine; a bound that tight failed when the whole suite ran at
    // once on two cores, so this checks the behaviour, not the speed.)
    #expect(ContinuousClock.now - started < .seconds(2))
    #expect(movies.first?.name == "Rogue One: A Star Wars Story")
    #expect(recorder.origin == "cache")
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
      var response = await server.responder.respond(to: request)
      response.headers[validator] = value
      return response
    }
    let clock = Mutex(Date(timeIntervalSince1970: 1_700_000_000))
    let database = try CacheDatabase.inMemory()
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    let api = ApiMovieService(
      client: ApiClient(context: context, transport: URLSessionTransport(), retriers: []))
    let layer = CachingLayer(
      database: database, policy: .cacheFirst(maxAge: .seconds(60)), now: { clock.withLock { $0 } })
    let service = LayeredMovieService(base: api, layers: [layer])

    let first = try await service.movie(id: 1)
    clock.withLock { $0 = $0.addingTimeInterval(600) }
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
