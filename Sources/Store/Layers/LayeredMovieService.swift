import Domain
import GRDB

/// A `MovieService` with layers around a base: each call becomes an `ServiceCall` the layers
/// (cache, logging, de-duplication, memory) handle. This file is all a service needs to get
/// every layer; a new call is one more line here and one `ServiceCall` below.
public struct LayeredMovieService: MovieService {
  public let base: any MovieService
  public let layer: any ServiceLayer

  public init(base: any MovieService, layers: [any ServiceLayer]) {
    self.base = base
    self.layer = LayerStack(layers)
  }

  public func movie(id: Int) async throws -> Movie {
    try await layer.run(.movie(id: id)) { try await base.movie(id: id) }
  }

  public func topGrossingMovies(year: Int) async throws -> [Movie] {
    try await layer.run(.topGrossingMovies(year: year)) {
      try await base.topGrossingMovies(year: year)
    }
  }

  public func topRatedMovies(year: Int) async throws -> [Movie] {
    try await layer.run(.topRatedMovies(year: year)) { try await base.topRatedMovies(year: year) }
  }
}

extension ServiceCall where Value == Movie {
  public static func movie(id: Int) -> Self {
    ServiceCall(
      name: "movie", key: "movies/\(id)", summary: "movie \(id)",
      cache: CacheMapping(
        read: { db in try MovieStore.movie(id: id, in: db).map { ($0.movie, $0.storedAt) } },
        write: { movie, storedAt, db in try MovieStore.upsert([movie], storedAt: storedAt, in: db) }
      ))
  }
}

extension ServiceCall where Value == [Movie] {
  public static func topGrossingMovies(year: Int) -> Self {
    list(
      name: "topGrossingMovies", key: "movies/topGrossing/\(year)",
      summary: "the top-grossing movies of \(year)",
      read: { db in try MovieStore.topGrossing(year: year, limit: 10, in: db) })
  }

  public static func topRatedMovies(year: Int) -> Self {
    list(
      name: "topRatedMovies", key: "movies/topRated/\(year)",
      summary: "the top-rated movies of \(year)",
      read: { db in try MovieStore.topRated(year: year, limit: 10, in: db) })
  }

  /// A list read by a query over every stored movie; an empty list is not a stored answer.
  private static func list(
    name: String, key: String, summary: String,
    read: @escaping @Sendable (GRDB.Database) throws -> [StoredMovie]
  ) -> Self {
    ServiceCall(
      name: name, key: key, summary: summary,
      cache: CacheMapping(
        read: { db in
          let stored = try read(db)
          guard let oldest = stored.map(\.storedAt).min() else { return nil }
          return (stored.map(\.movie), oldest)
        },
        write: { movies, storedAt, db in try MovieStore.upsert(movies, storedAt: storedAt, in: db) }
      ))
  }
}
