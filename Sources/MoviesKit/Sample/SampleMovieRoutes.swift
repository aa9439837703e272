import Foundation
import SampleApi

extension FixtureRoutes {
  /// The bundled movie API under `basePath`: `GET movies/{id}` (naming its version, `ETag`:
  /// `movieETag`), `GET movies/topGrossing/{year}`, `GET movies/topRated/{year}`,
  /// `GET movies/{id}/poster` (`posterBytes` made-up bytes, with an `ETag`, honouring `Range`
  /// and `If-Range`: `SampleRange`), and `ratings`' `POST movies/{id}/ratings` (201, honouring
  /// `Idempotency-Key`, and `If-Match`: 412 for another version than the movie's) and
  /// `GET movies/{id}/ratings`, and `GET movies/changes?since=T&per_page=N` (`SampleChanges`).
  /// Bodies are JSON sent as `text/html`, as static hosts send them.
  /// Ids past the bundled movies up to `extraMovies` more are made up
  /// (`SampleMovie.generated`).
  public static func sampleMovies(
    basePath: String = "/api/", extraMovies: Int = 0, ratings: SampleRatings = SampleRatings(),
    posterBytes: Int = SampleMovie.defaultPosterBytes
  ) -> FixtureRoutes {
    var routes = FixtureRoutes()
    routes.add("GET", basePath + "movies/{id}/poster") { request in
      let text = request.parameters["id"] ?? ""
      guard let id = Int(text), movie(id: id, extraMovies: extraMovies) != nil else {
        return .error(404, "no movie with id \(text)")
      }
      let range = SampleRange(
        length: posterBytes, etag: "\"poster-\(id)-\(posterBytes)\"", headers: request.headers)
      var headers = range.headers
      headers["Content-Type"] = "application/octet-stream"
      // Made as it is sent: a poster of hundreds of megabytes is served in bounded memory.
      return SampleResponse(
        status: range.status, headers: headers,
        generating: SampleRange.generated(range.offset, range.count, of: id))
    }
    routes.add("POST", basePath + "movies/{id}/ratings") { request in
      let text = request.parameters["id"] ?? ""
      guard let id = Int(text), movie(id: id, extraMovies: extraMovies) != nil else {
        return .error(404, "no movie with id \(text)")
      }
      if let ifMatch = request.headers["if-match"], ifMatch != movieETag(id) {
        return .error(412, "movie \(id) is no longer the version \(ifMatch); read it again")
      }
      return ratings.rate(
        id, body: request.body, idempotencyKey: request.headers["idempotency-key"])
    }
    routes.add("GET", basePath + "movies/{id}/ratings") { request in
      guard let id = request.parameters["id"].flatMap({ Int($0) }) else {
        return .error(404, "no movie with id \(request.parameters["id"] ?? "")")
      }
      return ratings.list(id)
    }
    routes.add("GET", basePath + "movies/changes") { request in
      SampleChanges.page(
        since: request.query["since"], perPage: request.query["per_page"],
        extraMovies: extraMovies)
    }
    routes.add("GET", basePath + "movies/{id}") { request in
      let text = request.parameters["id"] ?? ""
      guard let id = Int(text), let movie = movie(id: id, extraMovies: extraMovies) else {
        return .error(404, "no movie with id \(text)")
      }
      var answer = SampleResponse.staticJSON(movie)
      answer.headers["ETag"] = movieETag(id)
      return answer
    }
    routes.add("GET", basePath + "movies/topGrossing/{year}") { request in
      guard let year = request.parameters["year"].flatMap({ Int($0) }) else {
        return .error(404, "not a year: \(request.parameters["year"] ?? "")")
      }
      return .staticJSON(SampleMovie.topGrossing(year: year))
    }
    routes.add("GET", basePath + "movies/topRated/{year}") { request in
      guard let year = request.parameters["year"].flatMap({ Int($0) }) else {
        return .error(404, "not a year: \(request.parameters["year"] ?? "")")
      }
      return .staticJSON(SampleMovie.topRated(year: year))
    }
    return routes
  }

  /// The version of movie `id` its answer names (`ETag`), and a rating's `If-Match` must name
  /// when it has one: a sample movie never changes.
  public static func movieETag(_ id: Int) -> String { "\"movie-\(id)-1\"" }

  private static func movie(id: Int, extraMovies: Int) -> SampleMovie? {
    if let bundled = SampleMovie.movie(id: id) { return bundled }
    let last = SampleMovie.all.count
    // `id - last` cannot overflow for a positive id; `last + extraMovies` could.
    return id > last && id - last <= extraMovies ? SampleMovie.generated(id: id) : nil
  }
}
