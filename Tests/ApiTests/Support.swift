import Api
import Composition
import Domain
import Foundation
import SampleApi
import Synchronization
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The two ways a test reaches the sample API: over loopback HTTP, or in process.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case urlSession, sample
  var testDescription: String { rawValue }
}

/// A running fixture server and a client pointed at it through the chosen transport.
struct Harness {
  let server: FixtureServer
  let context: InMemoryApiContext
  let client: ApiClient

  static func start(
    _ kind: TransportKind = .urlSession, options: SampleApiResponder.Options = .init(),
    transport configuration: URLSessionTransport.Configuration = .init(),
    adapters: [any RequestAdapter] = [.defaultHeaders, .authToken],
    retriers: [any RequestRetrier] = []
  ) async throws -> Harness {
    let server = try await FixtureServer.start(options: options)
    let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
    let context = InMemoryApiContext(environment: environment)
    let transport: any Transport =
      switch kind {
      case .urlSession: URLSessionTransport(configuration: configuration)
      case .sample: InProcessTransport.sample(server.responder)
      }
    let client = ApiClient(
      context: context, transport: transport, adapters: adapters, retriers: retriers)
    return Harness(server: server, context: context, client: client)
  }

  var movies: ApiMovieService { ApiMovieService(client: client) }
}

/// Runs `body` with a harness and stops its server afterwards, whatever happens.
func withHarness<R>(
  _ kind: TransportKind = .urlSession, options: SampleApiResponder.Options = .init(),
  transport: URLSessionTransport.Configuration = .init(),
  adapters: [any RequestAdapter] = [.defaultHeaders, .authToken],
  retriers: [any RequestRetrier] = [],
  _ body: (Harness) async throws -> R
) async throws -> R {
  let harness = try await Harness.start(
    kind, options: options, transport: transport, adapters: adapters, retriers: retriers)
  do {
    let result = try await body(harness)
    await harness.server.stop()
    return result
  } catch {
    await harness.server.stop()
    throw error
  }
}

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

/// Values recorded from any thread, e.g. by a server route.
final class Recorder<Value: Sendable>: Sendable {
  private let values = Mutex<[Value]>([])
  func append(_ value: Value) { values.withLock { $0.append(value) } }
  var all: [Value] { values.withLock { $0 } }
}

/// A client for an environment whose server has stopped: every connection is refused.
func clientOfStoppedServer(retriers: [any RequestRetrier] = []) async throws -> ApiClient {
  let server = try await FixtureServer.start()
  let url = server.baseURL
  await server.stop()
  let context = InMemoryApiContext(environment: try ApiEnvironment(name: "gone", baseURL: url))
  return ApiClient(context: context, transport: URLSessionTransport(), retriers: retriers)
}

/// Starts `operation`, waits until `started()` says it is under way, cancels it, and expects it
/// to end within two seconds with `CancellationError`.
func expectPromptCancellation(
  of operation: @escaping @Sendable () async throws -> some Sendable, once started: () -> Bool,
  sourceLocation: SourceLocation = #_sourceLocation
) async {
  let task = Task { try await operation() }
  while !started() { await Task.yield() }
  let cancelled = ContinuousClock.now
  task.cancel()
  let result = await task.result
  #expect(ContinuousClock.now - cancelled < .seconds(2), sourceLocation: sourceLocation)
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
