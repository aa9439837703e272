import Domain
import Foundation
import KernelTesting
import Testing

@testable import Api

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The debug line `ApiClient` writes per try: everything a reader needs, no credential.
@Suite struct TraceTests {
  @Test func credentialsAreRedactedWhateverTheirHeaderIsCalled() throws {
    let url = try #require(URL(string: "https://reader:hunter2@api.example/api/movies/1"))
    var request = URLRequest(url: url)
    request.setValue("Bearer abc123", forHTTPHeaderField: "Authorization")
    request.setValue("k-456", forHTTPHeaderField: "X-Api-Key")
    request.setValue("Token t-789", forHTTPHeaderField: "X-Custom")
    request.setValue("s=1", forHTTPHeaderField: "Cookie")
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    // Named like nothing secret, but an adapter declares it so.
    request.setValue("shelf-42", forHTTPHeaderField: "X-Shelf")
    struct ShelfAdapter: RequestAdapter {
      var secretHeaders: Set<String> { ["X-Shelf"] }
      func adapt(_ request: URLRequest, for attempt: Attempt) async throws -> URLRequest { request }
    }
    let client = ApiClient(
      context: InMemoryApiContext(environment: .sample),
      transport: InProcessTransport { _ in ApiResponse(status: 200) }, adapters: [ShelfAdapter()])
    let line = client.traceLine(
      request, .response(ApiResponse(status: 503, headers: [:])),
      since: Stopwatch(ContinuousClock()),
      then: "; retried in 200 ms (backoff)")
    for secret in ["abc123", "k-456", "t-789", "s=1", "hunter2", "shelf-42"] {
      #expect(!line.contains(secret), "\(line)")
    }
    #expect(line.hasPrefix("GET https://reader:redacted@api.example/api/movies/1 ["))
    #expect(line.contains("Accept: application/json"))
    #expect(line.contains("Authorization: <redacted>") && line.contains("X-Api-Key: <redacted>"))
    #expect(line.contains("X-Shelf: <redacted>"))
    #expect(line.contains("→ 503 in ") && line.hasSuffix("; retried in 200 ms (backoff)"))
  }
}
