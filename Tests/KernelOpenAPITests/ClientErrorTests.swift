import Api
import Domain
import Foundation
import HTTPTypes
import KernelOpenAPI
import KernelTesting
import MoviesKit
import MoviesTesting
@_spi(Generated) import OpenAPIRuntime
import Testing

/// What a generated client throws is reported as Kernel's own errors are: a body the
/// generated code could not decode is bad data (exit 65), naming the operation and the field.
@Suite struct ClientErrorTests {
  struct Cast: Decodable { let name: String }
  struct Movie: Decodable { let cast: [Cast] }

  @Test func aBodyTheGeneratedCodeCannotDecodeIsBadDataNamingTheField() throws {
    let body = Data(#"{"cast": [{"name": "Ellen"}, {"name": 7}]}"#.utf8)
    var decoding: DecodingError?
    do { _ = try JSONDecoder().decode(Movie.self, from: body) } catch let error as DecodingError {
      decoding = error
    }
    let error = ClientError(
      operationID: "getMovie", operationInput: "1",
      request: HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/movies/1?x=1"),
      causeDescription: "Unknown", underlyingError: try #require(decoding))
    #expect(ServiceFailure.of(error) == .badData)
    #expect(
      "\(error.wrapped)"
        == "GET movies/1 answered data that does not fit at cast[1].name: expected a string,"
        + " found another type (getMovie).")
  }

  /// What the generated code throws for a 2xx of a type it does not take (the runtime's own
  /// error, through its generated entry point).
  static func unexpectedType(_ type: String) -> any Error {
    do {
      _ = try Converter(configuration: .init()).bestContentType(
        received: OpenAPIMIMEType(type), options: ["application/json"])
    } catch { return error }
    return TestFailure("\(type) was taken")
  }

  /// JSON a static host sends as `text/html`, which a generated client accepting JSON refuses:
  /// bad data naming the route and the types (exit 65), not the runtime's words (exit 70); a
  /// write the api took so is said to be applied.
  @Test func aTakenAnswerOfATypeTheClientRefusesIsBadDataNamingTheRoute() throws {
    var accepting = HTTPFields()
    accepting[.accept] = "application/json, application/problem+json;q=0.9"
    var html = HTTPFields()
    html[.contentType] = "text/html; charset=utf-8"
    func failure(_ method: HTTPRequest.Method, _ path: String, status: Int) -> ClientError {
      ClientError(
        operationID: method == .get ? "getMovie" : "rateMovie", operationInput: "1",
        request: HTTPRequest(
          method: method, scheme: nil, authority: nil, path: path, headerFields: accepting),
        response: HTTPResponse(status: .init(code: status), headerFields: html),
        causeDescription: "Unknown", underlyingError: Self.unexpectedType("text/html"))
    }
    let read = failure(.get, "/movies/1", status: 200)
    #expect(ServiceFailure.of(read) == .badData)
    #expect(
      "\(read.wrapped)"
        == "GET movies/1 answered text/html; charset=utf-8, not application/json or"
        + " application/problem+json as it accepts.")
    let write = failure(.post, "/movies/1/ratings", status: 201)
    #expect(ServiceFailure.of(write) == .badData)
    #expect(
      "\(write.wrapped)"
        == "rateMovie was applied by the api, but its answer could not be read (POST"
        + " movies/1/ratings answered text/html; charset=utf-8, not application/json or"
        + " application/problem+json as it accepts); do not send it again.")
    // A refusal the generated code could not read is the refusal its status says.
    let missing = failure(.get, "/movies/999", status: 404)
    #expect(ServiceFailure.of(missing) == .notFound)
    #expect("\(missing.wrapped)" == "GET movies/999 was not found (HTTP 404).")
    // Neither taken nor refused: the runtime's error is the generated client's own.
    #expect(ServiceFailure.of(failure(.get, "/movies/1", status: 304)) == nil)
  }

  @Test func anyOtherCauseIsReportedAsItIs() {
    let cause = ApiError.unreachable(route: .get("movies/1"), host: "127.0.0.1", reason: "refused")
    let error = ClientError(
      operationID: "getMovie", operationInput: "1", causeDescription: "x", underlyingError: cause)
    #expect(ServiceFailure.of(error) == .unreachable)
  }
}
