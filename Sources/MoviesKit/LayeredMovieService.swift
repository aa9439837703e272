import Domain
import Layers

/// A `MovieService` with layers around a `MovieSource` (the api's, or a fake): each call goes
/// through one `LayerStack`
/// (cache, logging, de-duplication, memory) described as a `ServiceCall`. This file is all a
/// service needs to get every layer; a new call is one more method here and one `ServiceCall`.
///
/// With no base (a store-only stack, the offline profile), a caching layer answers every call
/// or nothing does: `CacheMiss`.
public struct LayeredMovieService: MovieService, LayeredService {
  /// What answers under the layers: the api's source, a fake's, or nil (the store).
  public let base: Source<any MovieSource>?
  /// The layers the profile names.
  public var layers: LayerStack

  /// `layers` over `base`.
  public init(base: Source<any MovieSource>?, layers: [any ServiceLayer]) {
    self.base = base
    self.layers = LayerStack(layers)
  }

  /// Movie `id`, from its entity row whichever answer stored it.
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

extension ServiceCall where Value == Movie {
  /// Movie `id`: the entity `Movie` `id`, answered from its row whichever answer stored it.
  public static func movie(id: Int) -> Self {
    ServiceCall(name: "movie", entity: .item(Movie.self, id: id), summary: "movie \(id)")
  }
}

extension ServiceCall where Value == [Movie] {
  /// The top-grossing movies of `year`, kept as their ids; never fetched, the stored movies of
  /// that year by grossing (the talk's Realm `filter("year == 2016")`), ten at most.
  public static func topGrossingMovies(year: Int) -> Self {
    ServiceCall(
      name: "topGrossingMovies", key: "movies/topGrossing/\(year)",
      summary: "the top-grossing movies of \(year)", entities: .list(Movie.self),
      local: LocalQuery(
        filters: [.init("year", equals: .integer(year))],
        order: [.init("grossing", descending: true)],
        limit: 10, summary: "stored movies of \(year), by grossing"))
  }

  /// The top-rated movies of `year`, kept as their ids; never fetched, the stored movies of
  /// that year by rating, ten at most.
  public static func topRatedMovies(year: Int) -> Self {
    ServiceCall(
      name: "topRatedMovies", key: "movies/topRated/\(year)",
      summary: "the top-rated movies of \(year)", entities: .list(Movie.self),
      local: LocalQuery(
        filters: [.init("year", equals: .integer(year))],
        order: [.init("rating", descending: true)],
        limit: 10, summary: "stored movies of \(year), by rating"))
  }
}
