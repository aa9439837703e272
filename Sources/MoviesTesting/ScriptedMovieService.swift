import Domain
import Foundation
import MoviesKit
import Synchronization

/// A base whose answers a test sets: movies to return, or a failure of a given kind
/// (`.badData`, `.unreachable`, …), or `NotModified` (a 304); it counts the calls it gets.
/// Its answers come with no validators.
public final class ScriptedMovieService: MovieSource {
  /// The failure a test scripted, classified as it said.
  public struct Failure: Error, ClassifiedError, CustomStringConvertible {
    /// The kind the test asked for.
    public let failure: ServiceFailure
    public var description: String { "the scripted service failed: \(failure)" }
  }

  private let state = Mutex<
    (movies: [Movie], failure: ServiceFailure?, notModified: Bool, calls: Int)
  >(([], nil, false, 0))

  /// A source answering with `movies`.
  public init(_ movies: [Movie] = []) { answer(movies) }

  /// Answer with `movies` from now on.
  public func answer(_ movies: [Movie]) {
    state.withLock { $0 = (movies, nil, false, $0.calls) }
  }

  /// Fail every call with `failure` from now on.
  public func fail(_ failure: ServiceFailure) { state.withLock { $0.failure = failure } }

  /// Answer every call with `NotModified`, as an api does with a 304, from now on.
  public func sayNotModified() { state.withLock { $0.notModified = true } }

  /// How many calls it got.
  public var calls: Int { state.withLock { $0.calls } }

  private func next() throws -> [Movie] {
    let (movies, failure, notModified) = state.withLock {
      state -> ([Movie], ServiceFailure?, Bool) in
      state.calls += 1
      return (state.movies, state.failure, state.notModified)
    }
    if let failure { throw Failure(failure: failure) }
    if notModified { throw NotModified() }
    return movies
  }

  /// The scripted movie `id`; a rejection when the script has none.
  public func movie(id: Int) async throws -> any Validated<Movie> {
    guard let movie = try next().first(where: { $0.id == id }) else {
      throw Failure(failure: .rejected)
    }
    return WithoutValidators(movie)
  }

  /// The scripted movies of `year`, highest grossing first.
  public func topGrossingMovies(year: Int) async throws -> any Validated<[Movie]> {
    WithoutValidators(try next().filter { $0.year == year }.sorted { $0.grossing > $1.grossing })
  }

  /// The scripted movies of `year`, best rated first.
  public func topRatedMovies(year: Int) async throws -> any Validated<[Movie]> {
    WithoutValidators(try next().filter { $0.year == year }.sorted { $0.rating > $1.rating })
  }
}
