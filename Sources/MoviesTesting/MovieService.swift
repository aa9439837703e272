import Api
import Domain
import Layers
import MoviesKit

/// The movie calls as a service protocol, for tests that swap what answers under the layers (a
/// `ScriptedMovieService`): the small struct over the layers an app writes when it wants test
/// doubles. The movie example itself has no service type: its commands run its calls
/// (`ServiceCall.movie(id:)` and the lists) on the profile's `ServiceStack`.
public protocol MovieService: Sendable {
  /// Movie `id`.
  func movie(id: Int) async throws -> Movie
  /// The year's movies, highest grossing first.
  func topGrossingMovies(year: Int) async throws -> [Movie]
  /// The year's movies, best rated first.
  func topRatedMovies(year: Int) async throws -> [Movie]
}

/// What answers the movie calls under the layers in a test: each value with its validators.
public protocol MovieSource: Sendable {
  /// Movie `id`, with its validators.
  func movie(id: Int) async throws -> any Validated<Movie>
  /// The year's movies, highest grossing first, with the list's validators.
  func topGrossingMovies(year: Int) async throws -> any Validated<[Movie]>
  /// The year's movies, best rated first, with the list's validators.
  func topRatedMovies(year: Int) async throws -> any Validated<[Movie]>
}

/// The movie api as a `MovieSource`: each call's own request, sent through `client`.
public struct ApiMovieService: MovieSource {
  /// The client every request goes through.
  public let client: ApiClient

  /// Sends through `client`.
  public init(client: ApiClient) { self.client = client }

  public func movie(id: Int) async throws -> any Validated<Movie> {
    try await ServiceCall<Movie>.movie(id: id).response(from: client)
  }

  public func topGrossingMovies(year: Int) async throws -> any Validated<[Movie]> {
    try await ServiceCall<[Movie]>.topGrossingMovies(year: year).response(from: client)
  }

  public func topRatedMovies(year: Int) async throws -> any Validated<[Movie]> {
    try await ServiceCall<[Movie]>.topRatedMovies(year: year).response(from: client)
  }
}

/// A `MovieService` with layers around a `MovieSource` (the api's, or a scripted one): each of
/// the movie example's calls through one `LayerStack`. With no base (a store-only stack), a
/// caching layer answers every call or nothing does: `CacheMiss`.
public struct LayeredMovieService: MovieService, LayeredService {
  /// What answers under the layers: the api's source, a fake's, or nil (the store).
  public let base: Source<any MovieSource>?
  /// The layers.
  public var layers: LayerStack

  /// `layers` over `base`.
  public init(base: Source<any MovieSource>?, layers: [any ServiceLayer]) {
    self.base = base
    self.layers = LayerStack(layers)
  }

  public func movie(id: Int) async throws -> Movie {
    try await answer(.movie(id: id)) { try await $0.movie(id: id) }
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    try await answer(.topGrossingMovies(year: year)) { try await $0.topGrossingMovies(year: year) }
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    try await answer(.topRatedMovies(year: year)) { try await $0.topRatedMovies(year: year) }
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
