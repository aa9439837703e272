import Api
import Domain
import Foundation
import KernelTesting
import SampleApi
import Testing

/// What the client refuses to send or to follow, and how it sends what a route says: checked
/// with a recording transport that answers in process, so nothing leaves the machine.
@Suite(.timeLimit(.minutes(1))) struct RequestRulesTests {
  private func client(
    _ environment: ApiEnvironment, retriers: [any RequestRetrier] = [],
    clock: any Clock<Duration> = ContinuousClock(),
    answer: @escaping InProcessTransport.Handler = { _, _ in ApiResponse(status: 200) }
  ) -> (ApiClient, RecordingTransport) {
    let transport = RecordingTransport(answering: answer)
    let client = ApiClient(
      context: InMemoryApiContext(environment: environment), transport: transport,
      retriers: retriers, clock: clock)
    return (client, transport)
  }

  private func local() throws -> ApiEnvironment {
    try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:9/api/")
  }

  @Test func aBaseURLWithAQueryIsRefusedInOneSentence() throws {
    #expect {
      try ApiEnvironment(name: "qa", baseURL: "http://127.0.0.1:9/api/?k=v")
    } throws: { error in
      let text = "\(error)"
      return text.contains("Environment qa") && text.contains("has a query")
        && !text.contains("k=v") && text.contains("k=REDACTED")
    }
  }

  @Test func aPlusInAQueryValueArrivesAsAPlus() async throws {
    let (client, transport) = client(try local())
    let route = Route.get("search", query: [URLQueryItem(name: "q", value: "a+b & c=d;e")])
    _ = try await client.response(for: route)
    let path = try #require(transport.requests.all.first?.path)
    #expect(path == "/api/search?q=a%2Bb%20%26%20c%3Dd%3Be")
    let items = URLComponents(string: "http://h\(path)")?.queryItems
    #expect(items?.first?.value == "a+b & c=d;e")
  }

  @Test func aGetOrHeadWithABodyIsRefusedBeforeAnythingIsSent() async throws {
    let (client, transport) = client(try local())
    for method in [HTTPRequest.Method.get, .head] {
      let route = Route(method, "movies/1", body: .bytes(Data("{}".utf8)))
      let error = await apiError { try await client.response(for: route) }
      #expect("\(error.map(String.init(describing:)) ?? "")".contains("carries no body"))
      #expect(error?.failure == .rejected)
    }
    #expect(transport.requests.all.isEmpty)
  }

  @Test func aRedirectToPlainHttpOffLoopbackIsRefusedLikeTheSameEnvironmentWouldBe() async throws {
    let (client, transport) = client(try local()) { request, _ in
      if request.path == "/api/hop" {
        return ApiResponse(
          status: 302, headers: ["Location": "http://api.example.com/api/x?key=s3"])
      }
      return ApiResponse(status: 200)
    }
    let error = await apiError { try await client.response(for: .get("hop")) }
    guard case .redirectRefused(_, let location, let reason)? = error else {
      Issue.record("expected a refused redirect, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("plain http") && reason.contains("local"))
    #expect(!location.contains("s3"))
    #expect(transport.requests.all.count == 1)
    // The same hop is followed when the environment allows insecure http, as its base URL would be.
    let insecure = try ApiEnvironment(
      name: "lab", baseURL: "http://127.0.0.1:9/api/", allowsInsecureHTTP: true)
    let (allowing, seen) = self.client(insecure) { request, _ in
      request.path == "/api/hop"
        ? ApiResponse(status: 302, headers: ["Location": "http://api.example.com/api/x"])
        : ApiResponse(status: 200)
    }
    #expect(try await allowing.response(for: .get("hop")).status == 200)
    #expect(seen.requests.all.last?.authority == "api.example.com")
  }

  @Test func aRouteOwnAuthorizationIsKeptUnlessACredentialReplacesItAndTheTraceSaysSo()
    async throws
  {
    let own = Route(.get, "movies/1", headerFields: [.authorization: "Basic cm91dGU6b3du"])
    // No authentication, or one with no credential: the route's own header arrives intact.
    for authentication in [nil, AuthenticationInterceptor.plainToken()] {
      let transport = RecordingTransport { _, _ in ApiResponse(status: 200) }
      let client = ApiClient(
        context: InMemoryApiContext(environment: try local()), transport: transport,
        authentication: authentication, retriers: [])
      _ = try await client.response(for: own)
      #expect(transport.requests.all.first?.headerFields[.authorization] == "Basic cm91dGU6b3du")
    }
    // A credential replaces it, and the trace says so.
    let trace = Recorder<String>()
    let transport = RecordingTransport { _, _ in ApiResponse(status: 200) }
    let client = ApiClient(
      context: InMemoryApiContext(environment: try local(), token: AuthToken("context")),
      transport: transport, authentication: .plainToken(), retriers: [],
      monitors: [LogMonitor { trace.append($0) }])
    _ = try await client.response(for: own)
    _ = try await client.response(for: .get("movies/2"))
    let sent = transport.requests.all.map { $0.headerFields[.authorization] }
    #expect(sent == ["Bearer context", "Bearer context"])
    #expect(
      trace.all.contains {
        $0.contains(
          "the route's own Authorization header was replaced by the plainToken credential")
      })
  }

  @Test func anOriginFoundUnreachableFailsTheNextRequestsAtOnceForAWhile() async throws {
    let clock = TestClock()
    let transport = RecordingTransport(PlatformTransport(configuration: .loopbackTests))
    let client = ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "gone", baseURL: try urlOfStoppedServer())),
      transport: transport, retriers: [], clock: clock, unreachableFor: .seconds(30))
    for id in 1...5 {
      let error = await apiError { try await client.response(for: .get("movies/\(id)")) }
      #expect(error.map { ServiceFailure.of($0) } == .unreachable, "\(String(describing: error))")
    }
    #expect(transport.requests.all.count == 1)
    clock.advance(by: .seconds(31))
    _ = await apiError { try await client.response(for: .get("movies/6")) }
    #expect(transport.requests.all.count == 2)
  }

  @Test func aTokenTooLargeOrWithControlCharactersIsRefusedAndNothingSaved() async throws {
    for body in [
      Data(repeating: UInt8(ascii: "a"), count: 30 << 20), Data("abc\0def".utf8),
      Data(repeating: UInt8(ascii: "b"), count: 9 << 10),
    ] {
      let context = InMemoryApiContext(environment: try local())
      let client = ApiClient(
        context: context,
        transport: InProcessTransport { _, _ in ApiResponse(status: 200, body: body) },
        authentication: .plainToken(), retriers: [])
      let error = await apiError { try await client.login() }
      guard case .decoding(_, _, let reason)? = error else {
        Issue.record("expected a refused token, got \(String(describing: error))")
        continue
      }
      #expect(reason.contains("bytes") || reason.contains("control characters"), "\(reason)")
      #expect(context.token == nil)
    }
  }
}

/// What a URL shows of itself wherever a person sees it.
@Suite struct RedactionTests {
  @Test(arguments: [
    ("https://ghp_x@host/api/", "https://REDACTED@host/api/"),
    ("https://u:p4ss@host:8443/api/", "https://REDACTED@host:8443/api/"),
    ("http://h/api/?api_key=s3cret&page=2", "http://h/api/?api_key=REDACTED&page=REDACTED"),
    ("http://u:p/w@h/api/?tok#frag", "http://REDACTED@h/api/?REDACTED#REDACTED"),
    ("http://svc:Hash#Secret6@127.0.0.1:9/api/", "http://REDACTED@127.0.0.1:9/api/"),
    ("http://svc:Q?uery6@127.0.0.1:9/api/", "http://REDACTED@127.0.0.1:9/api/"),
    ("http://svc:a@b#c?d/e@127.0.0.1:9/api/", "http://REDACTED@127.0.0.1:9/api/"),
    ("http://127.0.0.1:9/api/#token=s3cret", "http://127.0.0.1:9/api/#REDACTED"),
    ("http://127.0.0.1:9/api/?a=1#", "http://127.0.0.1:9/api/?a=REDACTED#"),
    ("ht!tp://user:hunter2@bad host/", "ht!tp://REDACTED@bad host/"),
    ("http://127.0.0.1:8080/api/", "http://127.0.0.1:8080/api/"),
  ])
  func userInfoAndQueryValuesAreRedactedParsedOrNot(text: String, shown: String) {
    #expect(Redaction.url(text) == shown)
  }

  @Test func anEnvironmentDescribesItselfRedacted() throws {
    let environment = try ApiEnvironment(name: "prod", baseURL: "https://ghp_x:y@api.example/api/")
    #expect("\(environment)" == "prod (https://REDACTED@api.example/api/)")
    #expect(!environment.displayURL.contains("ghp_x"))
  }
}

/// What a server says goes into one sentence, cut to a size a person reads.
@Suite struct ServerMessageTests {
  @Test func aMessageOfAnySizeIsCutToOneLine() {
    let huge = String(repeating: "spam ", count: 2_000_000)
    let body = Data(#"{"error": {"message": "\#(huge)"}}"#.utf8)
    let failure = HTTPFailure(route: .get("shelf"), status: 422, body: body)
    #expect(failure.message.count <= 301)
    #expect(failure.description.count < 500)
    #expect(failure.message.hasSuffix("…"))
    let short = HTTPFailure(
      route: .get("shelf"), status: 422, body: Data(#"{"message": "no\nshelf"}"#.utf8))
    #expect(short.message == "no shelf")
  }
}

/// A trace shows what was sent, with only the secrets redacted.
@Suite struct RequestTraceTests {
  @Test func onlyWhatIsKnownToBeSecretIsRedacted() throws {
    var request = HTTPRequest(
      method: .post, scheme: "http", authority: "u:pw@127.0.0.1:9",
      path: "/api/movies/1/ratings?page=2&api_key=k1&token=t1&lang=en#frag")
    request.headerFields[.authorization] = "Bearer t2"
    request.headerFields[try #require(HTTPField.Name("Idempotency-Key"))] = "6F1-key"
    request.headerFields[try #require(HTTPField.Name("X-Library-Card"))] = "card-9"
    request.headerFields[try #require(HTTPField.Name("X-Auth-Token"))] = "t3"
    request.headerFields[.accept] = "application/json"
    let trace = RequestTrace(secretHeaders: ["X-Library-Card"], secretQueryItems: ["lang"])
    let line = trace.line(request, result: "201", milliseconds: 4)
    #expect(
      line
        == "POST http://REDACTED@127.0.0.1:9/api/movies/1/ratings?page=2&api_key=REDACTED&token=REDACTED"
        + "&lang=REDACTED#REDACTED [Accept: application/json, Authorization: <redacted>,"
        + " Idempotency-Key: 6F1-key, X-Auth-Token: <redacted>, X-Library-Card: <redacted>]"
        + " → 201 in 4 ms")
    for secret in ["pw", "k1", "t1", "t2", "t3", "card-9", "frag"] {
      #expect(!line.contains(secret), "\(secret)")
    }
  }
}
