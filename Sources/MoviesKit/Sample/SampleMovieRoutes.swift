import Domain
import Foundation
import SampleApi
import Synchronization

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

/// The sample API's ratings: `POST movies/{id}/ratings` with `{"score": N}` (1–100) answers
/// 201 with the rating, honouring `Idempotency-Key` as the IETF draft says (the same request
/// again with its key answers the first answer and applies nothing twice; the key reused for
/// another request — another movie or score — is 422); `GET movies/{id}/ratings` answers what was
/// applied, so a test
/// can count. Movies in `conflicts` answer 409, as a server that holds a newer version would.
public final class SampleRatings: Sendable {
  private struct State {
    var applied: [Int: [Rating]] = [:]
    /// Each key's first answer, and the request (movie and body) it answered.
    var answers: [String: (movie: Int, body: Data, answer: SampleResponse)] = [:]
    var conflicts: Set<Int>
    var next = 1
  }

  private let state: Mutex<State>

  /// Ratings of no movie yet; movies in `conflicts` answer 409.
  public init(conflicts: Set<Int> = []) { state = Mutex(State(conflicts: conflicts)) }

  /// The ratings applied to movie `id`, in order.
  public func applied(to id: Int) -> [Rating] { state.withLock { $0.applied[id] ?? [] } }

  /// How many ratings were applied in all.
  public var appliedCount: Int { state.withLock { $0.applied.values.reduce(0) { $0 + $1.count } } }

  /// Whether movie `id` answers ratings with 409 from now on.
  public func setConflict(_ conflict: Bool, movie id: Int) {
    state.withLock { state in
      if conflict {
        state.conflicts.insert(id)
      } else {
        state.conflicts.remove(id)
      }
    }
  }

  /// The answer to a rating of movie `id` with `body`, once per idempotency key.
  func rate(_ id: Int, body: Data, idempotencyKey: String?) -> SampleResponse {
    struct Asked: Decodable { let score: Int }
    guard let asked = try? JSONDecoder().decode(Asked.self, from: body) else {
      return .error(400, "a rating is {\"score\": N}")
    }
    guard (1...100).contains(asked.score) else {
      return .error(400, "a score is from 1 to 100, not \(asked.score)")
    }
    return state.withLock { state in
      if let key = idempotencyKey, let first = state.answers[key] {
        guard first.movie == id, first.body == body else {
          return .error(
            422, "the Idempotency-Key \(key) was used for another request; use a new key")
        }
        return first.answer
      }
      // A conflict applies nothing, so it is not kept: the same write may be tried again.
      if state.conflicts.contains(id) {
        return .error(409, "movie \(id) was rated in the meantime; rate it again")
      }
      let rating = Rating(id: state.next, movieId: id, score: asked.score)
      state.next += 1
      state.applied[id, default: []].append(rating)
      let answer = SampleResponse.json(rating, status: 201)
      if let key = idempotencyKey { state.answers[key] = (id, body, answer) }
      return answer
    }
  }

  /// What `GET movies/{id}/ratings` answers.
  func list(_ id: Int) -> SampleResponse {
    struct Listed: Encodable {
      let movieId: Int
      let count: Int
      let scores: [Int]
    }
    let ratings = applied(to: id)
    return .json(Listed(movieId: id, count: ratings.count, scores: ratings.map(\.score)))
  }
}
