import Domain
import Foundation

/// A `MovieService` that answers from the cache alone: the `offline` profile. "Top grossing of
/// 2016" comes from every 2016 movie it holds, whichever call stored it, as Realm did.
public struct OfflineMovieService: MovieService {
  public let store: MovieStore
  /// The wall clock an answer's age is measured against.
  public let now: @Sendable () -> Date

  public init(store: MovieStore, now: @escaping @Sendable () -> Date = { Date() }) {
    self.store = store
    self.now = now
  }

  public func movie(id: Int) async throws -> Movie {
    guard let stored = try store.movie(id: id) else { throw CacheMiss(what: "movie \(id)") }
    return answer([stored])[0]
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    let stored = try store.topGrossing(year: year)
    if stored.isEmpty { throw CacheMiss(what: "the top-grossing movies of \(year)") }
    return answer(stored)
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    let stored = try store.topRated(year: year)
    if stored.isEmpty { throw CacheMiss(what: "the top-rated movies of \(year)") }
    return answer(stored)
  }

  /// The movies, recorded as a cache answer as old as the oldest of them.
  private func answer(_ stored: [StoredMovie]) -> [Movie] {
    let now = now()
    let oldest = stored.map(\.storedAt).min() ?? now
    Provenance.record(Provenance(origin: .cache, age: max(0, now.timeIntervalSince(oldest))))
    return stored.map(\.movie)
  }
}

/// Nothing is cached for a request, and there is no network to ask.
public struct CacheMiss: Error, Sendable, CustomStringConvertible, ClassifiedError {
  public let what: String

  public init(what: String) { self.what = what }

  public var failure: ServiceFailure { .unreachable }

  public var description: String {
    "Nothing is cached for \(what), and the offline profile does not ask the api; run it once with a network profile."
  }
}
