/// Movies by id and the yearly lists: what every stack (api, cache, layered) answers.
public protocol MovieService: Sendable {
  func movie(id: Int) async throws -> Movie
  /// The year's movies, highest grossing first.
  func topGrossingMovies(year: Int) async throws -> [Movie]
  /// The year's movies, best rated first.
  func topRatedMovies(year: Int) async throws -> [Movie]
}
