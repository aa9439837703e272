import Domain

/// Movies from the API.
public struct ApiMovieService: MovieService {
  public let client: ApiClient
  public let mapping: JSONMapping

  /// `mapping` says where in each body the movies are (the whole body by default).
  public init(client: ApiClient, mapping: JSONMapping = .body) {
    self.client = client
    self.mapping = mapping
  }

  public func movie(id: Int) async throws -> Movie {
    try await client.value(ApiMovie.self, for: .movie(id: id), mapping: mapping).convert()
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    try await client.value([ApiMovie].self, for: .topGrossingMovies(year: year), mapping: mapping)
      .map { $0.convert() }
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    try await client.value([ApiMovie].self, for: .topRatedMovies(year: year), mapping: mapping).map
    { $0.convert() }
  }
}
