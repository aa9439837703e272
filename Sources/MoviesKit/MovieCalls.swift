import Api
import Domain
import Foundation
import Layers

/// The movie api's calls, each declared once: its request, and how its answer is kept offline (a
/// write: its order, edits and precondition). Whichever stack the profile names for `movies`
/// answers, watches, writes and downloads them (`composed.stack("movies")`); nothing else is
/// written per call.
extension ServiceCall where Value == Movie {
  /// `GET movies/{id}`: the entity `Movie/{id}`, answered from its row whichever answer stored it.
  public static func movie(id: Int) -> Self {
    ServiceCall(ApiRequest(.get("movies/\(id)")), entities: .item(Movie.self, id: id))
  }
}

extension ServiceCall where Value == [Movie] {
  /// `GET movies/topGrossing/{year}`, kept as the ids of its movies; never stored, the stored
  /// movies of that year by grossing (the talk's Realm `filter("year == 2016")`), ten at most.
  public static func topGrossingMovies(year: Int) -> Self {
    list(
      "topGrossingMovies", .get("movies/topGrossing/\(year)"), year: year, by: \.grossing,
      "grossing", summary: "the top-grossing movies of \(year)")
  }

  /// `GET movies/topRated/{year}`, kept as the ids of its movies; never stored, the stored movies
  /// of that year by rating, ten at most.
  public static func topRatedMovies(year: Int) -> Self {
    list(
      "topRatedMovies", .get("movies/topRated/\(year)"), year: year, by: \.rating, "rating",
      summary: "the top-rated movies of \(year)")
  }

  private static func list<Field>(
    _ name: String, _ route: Route, year: Int, by field: KeyPath<Movie, Field>, _ label: String,
    summary: String
  ) -> Self {
    ServiceCall(
      ApiRequest(route), name: name, summary: summary, entities: .list(Movie.self),
      local: LocalQuery(
        filters: [.init(\Movie.year, equals: .integer(year))],
        order: [.init(field, descending: true)], limit: 10,
        summary: "stored movies of \(year), by \(label)"))
  }
}

extension ServiceCall where Value == Rating {
  /// `POST movies/{id}/ratings` with `{"score": N}`: a movie's ratings go in the order they were
  /// made; sent, the stored movie is marked stale (the api's rating changes); kept, it shows the
  /// score as its rating, marked pending. `ifUnchanged`: sent with `If-Match`, the ETag of the
  /// stored movie as its own answer gave it, so the api refuses it (412) if the movie changed
  /// since; with no such ETag stored it is refused before anything is sent or kept.
  public static func rate(movie id: Int, score: Int, ifUnchanged: Bool = false) throws -> Self {
    let movie = ServiceCall<Movie>.movie(id: id)
    return ServiceCall(
      .init(.post("movies/\(id)/ratings", body: try .json(["score": score]))), name: "rateMovie",
      summary: "a rating of movie \(id)", stored: false
    ).writing(
      ordering: movie.key, invalidates: [movie.key],
      optimistic: [.update(movie) { $0.rating = Double(score) }],
      precondition: ifUnchanged ? movie.key : nil)
  }
}

extension ServiceCall where Value == Data {
  /// `GET movies/{id}/poster`: the movie's poster, downloaded to a file (`kernel movies poster`),
  /// never kept by the layers.
  public static func moviePoster(id: Int) -> Self {
    ServiceCall(
      .data(.get("movies/\(id)/poster")), summary: "the poster of movie \(id)", stored: false)
  }
}

extension ChangesFeed {
  /// `GET movies/changes?since=T`: the movies created, updated and deleted since `T`, in
  /// WatermelonDB's pull shape (`kernel sync`).
  public static let movies = ChangesFeed.watermelon(
    Movie.self, table: "movies", path: "movies/changes")
}
