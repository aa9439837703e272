import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@Suite(.timeLimit(.minutes(1))) struct JSONMappingTests {
  private static let good = """
    {"id": 1, "name": "Finding Dory", "year": 2016, "releaseDate": "2016-06-17", "grossing": 486295561,
     "rating": 77, "cast": [{"name": "Ellen DeGeneres"}, {"name": "Albert Brooks"}, {"name": "Ed O'Neill"}]}
    """

  /// Serves `body` as the answer to `movies/1` and returns what the service made of it.
  private func decodeMovie(
    _ body: String, mapping: JSONMapping = .body
  ) async throws -> Result<Movie, ApiError> {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      harness.server.handle("GET", "/api/movies/1") { _ in htmlResponse(body) }
      do {
        return .success(
          try await harness.client.send(ApiRequest<Movie>(.movie(id: 1), mapping: mapping)))
      } catch let error as ApiError {
        return .failure(error)
      }
    }
  }

  @Test func jsonSentAsTextHtmlDecodes() async throws {
    let movie = try await decodeMovie(Self.good).get()
    #expect(movie.name == "Finding Dory")
    #expect(CalendarDay.string(from: movie.releaseDate) == "2016-06-17")
  }

  @Test(arguments: [
    ("{\"id\": 1, \"name\": ", "", "the body is not valid JSON"),
    (
      good.replacingOccurrences(of: "\"id\": 1,", with: "\"id\": 99999999999999999999,"), "id",
      "the number 99999999999999999999 does not fit a 64-bit integer"
    ),
    (
      good.replacingOccurrences(of: "486295561", with: "486295561.5"), "",
      "a value does not fit its field's type"
    ),
    ("", "", "the body is empty"),
    (" \r\n", "", "the body is empty"),
    (good.replacingOccurrences(of: "\"year\": 2016, ", with: ""), "year", "the field is missing"),
    (
      good.replacingOccurrences(of: "\"grossing\": 486295561", with: "\"grossing\": \"lots\""),
      "grossing", "expected a number"
    ),
    (
      good.replacingOccurrences(of: "{\"name\": \"Ed O'Neill\"}", with: "{\"name\": 7}"),
      "cast[2].name", "expected a string"
    ),
    (
      good.replacingOccurrences(of: "2016-06-17", with: "2016-13-45"), "releaseDate",
      "expected an ISO 8601 date, found \"2016-13-45\""
    ),
    (
      good.replacingOccurrences(of: "\"name\": \"Finding Dory\"", with: "\"name\": null"), "name",
      "found null"
    ),
  ])
  func badBodiesNameTheRouteAndTheField(body: String, field: String, reason: String) async throws {
    let result = try await decodeMovie(body)
    guard case .failure(.decoding(let route, let actualField, let actualReason)) = result else {
      Issue.record("expected a decoding error, got \(result)")
      return
    }
    #expect(route == .movie(id: 1))
    #expect(actualField == field)
    #expect(actualReason.contains(reason))
    if case .failure(let error) = result {
      #expect(error.failure == .badData)
      #expect(error.description.hasPrefix("GET movies/1 answered data that does not fit"))
    }
  }

  @Test func aValueIsFoundAtAKeyPath() async throws {
    let body = "{\"info\": {\"movie\": \(Self.good)}}"
    let movie = try await decodeMovie(body, mapping: JSONMapping(keyPath: "info.movie")).get()
    #expect(movie.id == 1)
  }

  @Test func aFieldPathIncludesTheKeyPath() async throws {
    let body =
      "{\"data\": \(Self.good.replacingOccurrences(of: "\"Albert Brooks\"", with: "false"))}"
    let result = try await decodeMovie(body, mapping: JSONMapping(keyPath: "data"))
    guard case .failure(.decoding(_, let field, _)) = result else {
      Issue.record("expected a decoding error, got \(result)")
      return
    }
    #expect(field == "data.cast[1].name")
  }

  @Test func aMissingKeyPathIsNamed() async throws {
    let result = try await decodeMovie(
      "{\"info\": {}}", mapping: JSONMapping(keyPath: "info.movie"))
    guard case .failure(.decoding(_, let field, let reason)) = result else {
      Issue.record("expected a decoding error, got \(result)")
      return
    }
    #expect(field == "info.movie")
    #expect(reason == "the field is missing")
  }

  @Test(arguments: ["1", "true"])
  func anEnvelopeThatSucceedsGivesItsData(success: String) async throws {
    let body = "{\"success\": \(success), \"data\": \(Self.good)}"
    let movie = try await decodeMovie(body, mapping: .successEnvelope).get()
    #expect(movie.name == "Finding Dory")
  }

  @Test func anEnvelopeThatFailsIsAnErrorWithItsMessage() async throws {
    let body = "{\"success\": 0, \"message\": \"movie locked\"}"
    let result = try await decodeMovie(body, mapping: .successEnvelope)
    guard case .failure(.envelopeFailure(let route, let message)) = result else {
      Issue.record("expected an envelope failure, got \(result)")
      return
    }
    #expect(route == .movie(id: 1))
    #expect(message == "movie locked")
  }

  @Test func aTokenCanComeAtAKeyPath() async throws {
    let atKeyPath = PlainTokenAuthenticator(
      request: .token(mapping: JSONMapping(keyPath: "info.token")))
    try await withLoopbackApi(routes: .sampleMovies(), authentication: .plainToken(atKeyPath)) {
      harness in
      harness.server.handle("GET", "/api/auth") { _ in
        htmlResponse("{\"info\": {\"token\": \"abc123\"}}")
      }
      try await harness.client.login()
      #expect(harness.context.token?.secret == "abc123")
    }
  }

  @Test func anEmptyTokenIsRefusedAndNothingIsStored() async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      harness.server.handle("GET", "/api/auth") { _ in htmlResponse("  \n") }
      let error = await apiError { try await harness.client.login() }
      guard case .decoding(let route, _, let reason) = error, route == .auth else {
        Issue.record("expected a decoding error, got \(String(describing: error))")
        return
      }
      #expect(reason.contains("empty"))
      #expect(harness.context.token == nil)
    }
  }
}

/// A date and time that is no real one is refused, not rolled over into another.
@Suite struct ImpossibleDatesTests {
  struct Stamped: Decodable { let at: Date }

  @Test(arguments: [
    ("2026-11-25T25:00:00Z", false), ("2026-11-25T23:61:00Z", false),
    ("2026-02-30T10:00:00Z", false), ("2026-11-25T23:59:59.5+02:00", true),
    ("2026-11-25T00:00:00Z", true),
  ])
  func anHourOf25IsRefused(text: String, readable: Bool) {
    let body = Data(#"{"at": "\#(text)"}"#.utf8)
    let decoded = try? JSONMapping(dates: .iso8601).decode(
      Stamped.self, from: body, route: .get("stamps"))
    #expect((decoded != nil) == readable, "\(text)")
  }
}
