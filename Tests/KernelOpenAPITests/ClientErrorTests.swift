import Api
import Domain
import Foundation
import HTTPTypes
import KernelOpenAPI
import MoviesKit
import MoviesTesting
import OpenAPIRuntime
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

  @Test func anyOtherCauseIsReportedAsItIs() {
    let cause = ApiError.unreachable(route: .get("movies/1"), host: "127.0.0.1", reason: "refused")
    let error = ClientError(
      operationID: "getMovie", operationInput: "1", causeDescription: "x", underlyingError: cause)
    #expect(ServiceFailure.of(error) == .unreachable)
  }
}
