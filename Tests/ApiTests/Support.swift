import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// The domain value of a bundled movie, as the API layer should produce it.
func expected(_ movie: SampleMovie) throws -> Movie {
  Movie(
    id: movie.id, name: movie.name, year: movie.year,
    releaseDate: try #require(CalendarDay.date(from: movie.releaseDate)), grossing: movie.grossing,
    rating: movie.rating, cast: movie.cast.map { MovieActor(name: $0.name) })
}

/// A response with a JSON body sent as `text/html`, as static hosts do.
func htmlResponse(_ json: String, status: Int = 200) -> SampleResponse {
  SampleResponse(status: status, headers: ["Content-Type": "text/html"], body: Data(json.utf8))
}

/// The `ApiError` a throwing call threw, for matching its case.
func apiError(_ body: () async throws -> some Any) async -> ApiError? {
  do {
    _ = try await body()
    return nil
  } catch {
    return error as? ApiError
  }
}

/// A client for an environment whose server has stopped: every connection is refused.
func clientOfStoppedServer(
  retriers: [any RequestRetrier] = [], clock: any Clock<Duration> = ContinuousClock()
) async throws -> ApiClient {
  let context = InMemoryApiContext(
    environment: try ApiEnvironment(name: "gone", baseURL: try urlOfStoppedServer()))
  return ApiClient(
    context: context, transport: PlatformTransport(configuration: .loopbackTests),
    retriers: retriers, clock: clock)
}

/// Options whose every answer waits on `clock`: nothing is answered until a test advances it.
func heldBack(by clock: TestClock, _ options: SampleApiResponder.Options = .init())
  -> SampleApiResponder.Options
{
  var held = options
  held.latency = .seconds(30)
  held.clock = clock
  return held
}

/// Starts `operation`, waits until `started` returns (the operation is under way), cancels it,
/// and expects `CancellationError`. Whatever the operation waits for runs on a test clock that
/// nobody advances, so it can only end because cancelling ended it; the suite's time limit
/// reports a hang.
func expectCancellation(
  of operation: @escaping @Sendable () async throws -> some Sendable,
  once started: () async -> Void, sourceLocation: SourceLocation = #_sourceLocation
) async {
  let task = Task { try await operation() }
  await started()
  task.cancel()
  let result = await task.result
  #expect(throws: CancellationError.self, sourceLocation: sourceLocation) { try result.get() }
}

/// Answers `GET path` with 404 and records the headers of every request to it.
func recordHeaders(at path: String, of server: FixtureServer) -> Recorder<[String: String]> {
  let seen = Recorder<[String: String]>()
  server.handle("GET", path) { request in
    seen.append(request.headers)
    return htmlResponse("{}", status: 404)
  }
  return seen
}
