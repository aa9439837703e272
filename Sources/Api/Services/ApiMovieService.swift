import Domain

/// Movies from the API: three request values and a conversion, nothing else.
public struct ApiMovieService: MovieService {
  public let client: ApiClient
  public let mapping: JSONMapping

  /// `mapping` says where in each body the movies are (the whole body by default).
  public init(client: ApiClient, mapping: JSONMapping = .body) {
    self.client = client
    self.mapping = mapping
  }

  public func movie(id: Int) async throws -> Movie {
    try await client.send(ApiRequest<ApiMovie>(.movie(id: id), mapping: mapping)).convert()
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    try await client.send(ApiRequest<[ApiMovie]>(.topGrossingMovies(year: year), mapping: mapping))
      .map { $0.convert() }
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    try await client.send(ApiRequest<[ApiMovie]>(.topRatedMovies(year: year), mapping: mapping))
      .map { $0.convert() }
  }
}

extension Route {
  /// `GET movies/{id}`: one movie.
  public static func movie(id: Int) -> Route { .get("movies/\(id)") }
  /// `GET movies/topGrossing/{year}`: the year's movies by grossing.
  public static func topGrossingMovies(year: Int) -> Route { .get("movies/topGrossing/\(year)") }
  /// `GET movies/topRated/{year}`: the year's movies by rating.
  public static func topRatedMovies(year: Int) -> Route { .get("movies/topRated/\(year)") }
}
