import Domain
import Foundation
import KernelTesting
import Testing

@testable import Api

/// The debug line `ApiClient` writes per try: everything a reader needs, no credential.
@Suite struct TraceTests {
  @Test func credentialsAreRedactedWhateverTheirHeaderIsCalled() throws {
    let url = try #require(URL(string: "https://reader:hunter2@api.example/api/movies/1"))
    var request = HTTPRequest(.get, url)
    request.set("Authorization", "Bearer abc123")
    request.set("X-Api-Key", "k-456")
    request.set("X-Custom", "Token t-789")
    request.set("Cookie", "s=1")
    request.set("Accept", "application/json")
    // Named like nothing secret, but an adapter declares it so.
    request.set("X-Shelf", "shelf-42")
    struct ShelfAdapter: RequestAdapter {
      var secretHeaders: Set<String> { ["X-Shelf"] }
      func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
        request
      }
    }
    let client = ApiClient(
      context: InMemoryApiContext(environment: .sample),
      transport: InProcessTransport { _, _ in ApiResponse(status: 200) }, adapters: [ShelfAdapter()]
    )
    let line = client.traceLine(
      request, .response(ApiResponse(status: 503, headers: [:])),
      since: Stopwatch(ContinuousClock()),
      then: "; retried in 200 ms (backoff)")
    for secret in ["abc123", "k-456", "t-789", "s=1", "hunter2", "shelf-42"] {
      #expect(!line.contains(secret), "\(line)")
    }
    // A URL's user and password never leave in a request, so no line shows them either.
    #expect(line.hasPrefix("GET https://api.example/api/movies/1 ["))
    #expect(line.contains("Accept: application/json"))
    #expect(line.contains("Authorization: <redacted>") && line.contains("X-Api-Key: <redacted>"))
    #expect(line.contains("X-Shelf: <redacted>"))
    #expect(line.contains("→ 503 in ") && line.hasSuffix("; retried in 200 ms (backoff)"))
  }

  @Test func theEnvironmentsOwnTokenHeaderIsSecretWhateverItIsCalled() throws {
    let environment = try ApiEnvironment(
      name: "custom", baseURL: "https://api.example/api/", tokenHeader: "X-Custom",
      tokenScheme: nil)
    let client = ApiClient(
      context: InMemoryApiContext(environment: environment),
      transport: InProcessTransport { _, _ in ApiResponse(status: 200) })
    var request = HTTPRequest(.get, try #require(URL(string: "https://api.example/api/x?key=k-1")))
    request.set("X-Custom", "plain-token-77")
    let line = client.traceLine(
      request, .response(ApiResponse(status: 200)), since: Stopwatch(ContinuousClock()), then: "")
    #expect(!line.contains("plain-token-77") && line.contains("X-Custom: <redacted>"), "\(line)")
    #expect(!line.contains("k-1") && line.contains("?key=REDACTED"), "\(line)")
  }
}
