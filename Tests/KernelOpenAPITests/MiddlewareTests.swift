import Api
import Foundation
import HTTPTypes
import KernelOpenAPI
import KernelTesting
import OpenAPIRuntime
import SampleApi
import Testing

/// Kernel's authenticator and trace around a transport that is not Kernel's: what an app that
/// keeps its own transport adds to its generated client.
@Suite(.timeLimit(.minutes(1))) struct MiddlewareTests {
  /// "The app's own transport": a plain HTTP send of what the generated client built.
  static func own(_ request: HTTPRequest, _ body: HTTPBody?, _ baseURL: URL) async throws
    -> (HTTPResponse, HTTPBody?)
  {
    let url = URL(string: baseURL.absoluteString + (request.path ?? "")) ?? baseURL
    let response = try await PlatformTransport(configuration: .loopbackTests).send(
      HTTPRequest(method: request.method, url: url, headerFields: request.headerFields),
      body: nil)
    return (response.head, HTTPBody(response.body))
  }

  static func call(
    _ middleware: some ClientMiddleware, _ path: String, base: URL,
    headers: HTTPFields = [:]
  ) async throws -> Int {
    let request = HTTPRequest(
      method: .get, scheme: nil, authority: nil, path: path, headerFields: headers)
    let (response, _) = try await middleware.intercept(
      request, body: nil, baseURL: base, operationID: "getMovie", next: Self.own)
    return response.status.code
  }

  @Test func theAuthenticatorRunsAroundAnotherTransportAcrossAnExpiry() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    try await withLoopbackApi(routes: .sampleMovies(), options: options) { api in
      let base =
        URL(string: String(api.server.baseURL.absoluteString.dropLast())) ?? api.server.baseURL
      let middleware = AuthenticationMiddleware(client: api.client)
      #expect(try await Self.call(middleware, "/movies/1", base: base) == 200)
      #expect(api.responder.tokensIssued == 1)
      api.responder.expireTokens()
      let codes = try await withThrowingTaskGroup(of: Int.self) { group in
        for id in 1...10 {
          group.addTask { try await Self.call(middleware, "/movies/\(id)", base: base) }
        }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(codes == Array(repeating: 200, count: 10))
      #expect(api.responder.tokensIssued == 2)
      // Without the middleware the same transport is refused.
      let bare = try await Self.own(
        HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/movies/1"), nil, base)
      #expect(bare.0.status.code == 401)
    }
  }

  @Test func theTraceWritesALineACallWithoutSecrets() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), authentication: nil) { api in
      let base =
        URL(string: String(api.server.baseURL.absoluteString.dropLast())) ?? api.server.baseURL
      let lines = Recorder<String>()
      let trace = TraceMiddleware(
        trace: RequestTrace(secretQueryItems: ["sig"]), clock: TestClock(immediate: true)
      ) { lines.append($0) }
      var headers = HTTPFields()
      headers[.authorization] = "Bearer s3cret"
      headers[HTTPField.Name("Idempotency-Key")!] = "k-1"
      let status = try await Self.call(
        trace, "/movies/2?api_key=s3cret&sig=s3cret&page=2", base: base, headers: headers)
      #expect(status == 200)
      let written = lines.all
      // The client's own line builder: the api key and the declared query item redacted,
      // what else was sent shown.
      #expect(
        written == [
          "getMovie: GET \(base.absoluteString)/movies/2?api_key=REDACTED&sig=REDACTED&page=2"
            + " [Authorization: <redacted>, Idempotency-Key: k-1] → 200 in 0 ms"
        ])
      #expect(!written.joined().contains("s3cret"))
    }
  }
}
