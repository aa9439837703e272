import Api
import Domain
import Foundation
import HTTPTypes
import MoviesKit
import Synchronization

/// The movie api as a test double at the transport: it answers the movie calls' requests
/// (`GET movies/{id}`, `movies/topGrossing/{year}`, `movies/topRated/{year}`) from the movies a
/// test sets, as the api would over HTTP, or fails the way a test says (`.unreachable`: the
/// connection refused; `.unavailable`: 503; `.notFound`: 404; `.rejected`: 400; `.badData`: a
/// body that is not a movie); it counts the requests it gets and notes the `If-None-Match` each
/// offered. With `etag`, its answers carry it, and a request
/// offering it is answered 304. The layers above run as they do over the network.
public final class ScriptedMovieApi: Sendable {
  private struct State {
    var movies: [Movie]
    var failure: ServiceFailure?
    var etag: String?
    var offered: [String?] = []
  }

  private let state: Mutex<State>

  /// An api answering with `movies`; with `etag`, its answers carry it.
  public init(_ movies: [Movie] = [], etag: String? = nil) {
    state = Mutex(State(movies: movies, etag: etag))
  }

  /// Answer with `movies` from now on.
  public func answer(_ movies: [Movie]) {
    state.withLock { ($0.movies, $0.failure) = (movies, nil) }
  }

  /// Fail every request as `failure` says from now on.
  public func fail(_ failure: ServiceFailure) { state.withLock { $0.failure = failure } }

  /// How many requests it got.
  public var calls: Int { state.withLock { $0.offered.count } }

  /// The `If-None-Match` each request offered, in order (nil where none was).
  public var offered: [String?] { state.withLock { $0.offered } }

  /// A client of this api, with no retries and no memory of an unreachable origin: a test sees
  /// each failure as it happens, and the api back the moment it says so.
  public var client: ApiClient {
    get throws { try client(waitingOn: {}) }
  }

  /// `client` whose every request first waits for `wait` (a gate the test opens).
  public func client(waitingOn wait: @escaping @Sendable () async -> Void) throws -> ApiClient {
    ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "scripted", baseURL: "http://127.0.0.1/api/")),
      transport: InProcessTransport { [self] request, _ in
        await wait()
        return try respond(to: request)
      },
      retriers: [], unreachableFor: .zero)
  }

  private func respond(to request: HTTPRequest) throws -> ApiResponse {
    let state = self.state.withLock { state -> State in
      state.offered.append(request.headerFields[.ifNoneMatch])
      return state
    }
    if let failure = state.failure {
      switch failure {
      case .unreachable:
        throw TransportError.cannotConnect(host: "127.0.0.1", reason: "connection refused")
      case .unavailable: return ApiResponse(status: 503)
      case .notFound: return ApiResponse(status: 404)
      case .badData: return ApiResponse(status: 200, body: Data("not a movie".utf8))
      default: return ApiResponse(status: 400)
      }
    }
    let tagged = state.etag.map { ["ETag": $0] } ?? [:]
    if state.etag != nil && request.headerFields[.ifNoneMatch] == state.etag {
      return ApiResponse(status: 304, headers: tagged)
    }
    let parts = (request.path ?? "").split(separator: "/").map(String.init)
    let year = parts.last.flatMap(Int.init) ?? 0
    let answer: any Encodable
    switch parts.dropFirst(2).first {
    case "topGrossing":
      answer = state.movies.filter { $0.year == year }.sorted { $0.grossing > $1.grossing }
    case "topRated":
      answer = state.movies.filter { $0.year == year }.sorted { $0.rating > $1.rating }
    default:
      // A movie the script lacks is refused, as a request the api cannot answer.
      guard let movie = state.movies.first(where: { $0.id == year }) else {
        return ApiResponse(status: 400)
      }
      answer = movie
    }
    return ApiResponse(
      status: 200, headers: tagged, body: try JSONMapping.body.encoder().encode(answer))
  }
}
