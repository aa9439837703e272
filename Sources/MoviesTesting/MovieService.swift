import Api
import Domain
import Layers
import MoviesKit

/// The movie calls as a service protocol, for tests that want one (`MovieStack` runs them on a
/// stack; `ScriptedMovieApi` is the api under it). The movie example itself has no service
/// type: its commands run its calls (`ServiceCall.movie(id:)` and the lists) on the profile's
/// `ServiceStack`.
public protocol MovieService: Sendable {
  /// Movie `id`.
  func movie(id: Int) async throws -> Movie
  /// The year's movies, highest grossing first.
  func topGrossingMovies(year: Int) async throws -> [Movie]
  /// The year's movies, best rated first.
  func topRatedMovies(year: Int) async throws -> [Movie]
}

/// The movie calls over one `ServiceStack`: the small struct over the runner an app writes when
/// it wants a service type for its tests. Its answers' origins are the stack's
/// (`stack.answer(.movie(id: 1)).origin`).
public struct MovieStack: MovieService {
  /// The stack every call runs on.
  public let stack: ServiceStack

  /// The calls on `stack`.
  public init(_ stack: ServiceStack) { self.stack = stack }

  /// `layers` over `api` (a scripted api at the transport), or over nothing: the store alone.
  public init(api: ScriptedMovieApi?, layers: [any ServiceLayer]) throws {
    self.init(ServiceStack(client: try api?.client, layers: layers))
  }

  public func movie(id: Int) async throws -> Movie {
    try await stack.answer(.movie(id: id)).value
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    try await stack.answer(.topGrossingMovies(year: year)).value
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    try await stack.answer(.topRatedMovies(year: year)).value
  }
}

extension Route {
  /// The route of `ServiceCall.movie(id:)`, for tests of the api layer alone.
  public static func movie(id: Int) -> Route { route(of: ServiceCall<Movie>.movie(id: id)) }
  /// The route of `ServiceCall.topGrossingMovies(year:)`.
  public static func topGrossingMovies(year: Int) -> Route {
    route(of: ServiceCall<[Movie]>.topGrossingMovies(year: year))
  }
  /// The route of `ServiceCall.topRatedMovies(year:)`.
  public static func topRatedMovies(year: Int) -> Route {
    route(of: ServiceCall<[Movie]>.topRatedMovies(year: year))
  }

  /// Every movie call carries its request.
  private static func route<Value>(of call: ServiceCall<Value>) -> Route {
    call.route ?? Route(.get, call.key)
  }
}
