import Domain

/// Movies by id and the yearly lists: what every stack (api, cache, layered) answers.
public protocol MovieService: Sendable {
  /// Movie `id`.
  func movie(id: Int) async throws -> Movie
  /// The year's movies, highest grossing first.
  func topGrossingMovies(year: Int) async throws -> [Movie]
  /// The year's movies, best rated first.
  func topRatedMovies(year: Int) async throws -> [Movie]
}

/// What answers the movie calls under a stack of layers: each value with the validators it
/// came with (`ApiMovieService`: the api's `Response`s), so a caching layer can keep them and
/// ask "changed since?" next time. `LayeredMovieService` turns it into a `MovieService`.
public protocol MovieSource: Sendable {
  /// Movie `id`, with its validators.
  func movie(id: Int) async throws -> any Validated<Movie>
  /// The year's movies, highest grossing first, with the list's validators.
  func topGrossingMovies(year: Int) async throws -> any Validated<[Movie]>
  /// The year's movies, best rated first, with the list's validators.
  func topRatedMovies(year: Int) async throws -> any Validated<[Movie]>
}
