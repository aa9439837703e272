import Api
import Domain

/// Movies from the API: three request values and a conversion, nothing else. Each answer is the
/// api's `Response` (value, status, header fields, validators): what a cache above keeps.
public struct ApiMovieService: MovieSource {
  /// The client every request goes through.
  public let client: ApiClient
  /// Where in each body the movies are, and how its keys and dates are written.
  public let mapping: JSONMapping

  /// `mapping` says where in each body the movies are (the whole body by default).
  public init(client: ApiClient, mapping: JSONMapping = .body) {
    self.client = client
    self.mapping = mapping
  }

  /// `GET movies/{id}`.
  public func movie(id: Int) async throws -> any Validated<Movie> {
    try await client.response(ApiRequest<ApiMovie>(.movie(id: id), mapping: mapping))
      .map { $0.convert() }
  }

  /// `GET movies/top-grossing?year=…`.
  public func topGrossingMovies(year: Int) async throws -> any Validated<[Movie]> {
    try await list(.topGrossingMovies(year: year))
  }

  /// `GET movies/top-rated?year=…`.
  public func topRatedMovies(year: Int) async throws -> any Validated<[Movie]> {
    try await list(.topRatedMovies(year: year))
  }

  private func list(_ route: Route) async throws -> Response<[Movie]> {
    try await client.response(ApiRequest<[ApiMovie]>(route, mapping: mapping))
      .map { $0.map { $0.convert() } }
  }
}

extension Route {
  /// `GET movies/{id}`: one movie.
  public static func movie(id: Int) -> Route { .get("movies/\(id)") }
  /// `GET movies/topGrossing/{year}`: the year's movies by grossing.
  public static func topGrossingMovies(year: Int) -> Route { .get("movies/topGrossing/\(year)") }
  /// `GET movies/topRated/{year}`: the year's movies by rating.
  public static func topRatedMovies(year: Int) -> Route { .get("movies/topRated/\(year)") }
  /// `GET movies/{id}/poster`: the movie's poster, downloaded to a file (`kernel movies poster`).
  public static func moviePoster(id: Int) -> Route { .get("movies/\(id)/poster") }
}
