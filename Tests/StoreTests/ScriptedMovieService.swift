import Domain
import Foundation
import Synchronization

/// A base service whose answers a test sets: movies to return, or a failure of a given kind.
final class ScriptedMovieService: MovieService {
  struct Failure: Error, ClassifiedError {
    let failure: ServiceFailure
  }

  private let state = Mutex<(movies: [Movie], failure: ServiceFailure?, calls: Int)>(([], nil, 0))

  init(_ movies: [Movie] = []) { answer(movies) }

  func answer(_ movies: [Movie]) { state.withLock { $0 = (movies, nil, $0.calls) } }

  func fail(_ failure: ServiceFailure) { state.withLock { $0.failure = failure } }

  var calls: Int { state.withLock { $0.calls } }

  private func next() throws -> [Movie] {
    let (movies, failure) = state.withLock { state -> ([Movie], ServiceFailure?) in
      state.calls += 1
      return (state.movies, state.failure)
    }
    if let failure { throw Failure(failure: failure) }
    return movies
  }

  func movie(id: Int) async throws -> Movie {
    guard let movie = try next().first(where: { $0.id == id }) else {
      throw Failure(failure: .rejected)
    }
    return movie
  }

  func topGrossingMovies(year: Int) async throws -> [Movie] {
    try next().filter { $0.year == year }.sorted { $0.grossing > $1.grossing }
  }

  func topRatedMovies(year: Int) async throws -> [Movie] {
    try next().filter { $0.year == year }.sorted { $0.rating > $1.rating }
  }
}
