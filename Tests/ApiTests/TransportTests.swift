import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// The platform's transport (libcurl on Linux, URLSession on Apple platforms) over real
/// loopback HTTP, and the client's one redirect rule on top of it.
@Suite(.timeLimit(.minutes(1))) struct TransportTests {
  /// A server that records the headers of every request to `/record`.
  private func recorder() async throws -> (FixtureServer, Recorder<[String: String]>) {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let seen = Recorder<[String: String]>()
    server.handle("GET", "/record") { request in
      seen.append(request.headers)
      return htmlResponse("{}")
    }
    return (server, seen)
  }

  /// Declares `X-Shelf` secret, as an app's key adapter would.
  private struct ShelfAdapter: RequestAdapter {
    var secretHeaders: Set<String> { ["X-Shelf"] }
    func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
      var adapted = request
      adapted.set("X-Shelf", "shelf-42")
      return adapted
    }
  }

  /// A client of `server`'s API holding a token, with Kernel's adapters and the shelf key.
  private func client(of server: FixtureServer) throws -> ApiClient {
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL),
      token: AuthToken("secret-token"))
    return ApiClient(
      context: context, transport: PlatformTransport(configuration: .loopbackTests),
      adapters: [.defaultHeaders, ShelfAdapter()], authentication: .plainToken(), retriers: [])
  }

  @Test func aRedirectToAnotherPortCarriesNoCredentials() async throws {
    let (target, seen) = try await recorder()
    let origin = try await FixtureServer.start(routes: .sampleMovies())
    origin.handle("GET", "/api/hop") { _ in
      SampleResponse(status: 302, headers: ["Location": "http://127.0.0.1:\(target.port)/record"])
    }
    let response = try await client(of: origin).response(for: .get("hop"))
    await origin.stop()
    await target.stop()

    #expect(response.status == 200)
    let headers = try #require(seen.all.first)
    #expect(headers["authorization"] == nil)
    #expect(headers["x-shelf"] == nil)
    #expect(headers["accept"] == "application/json")
  }

  @Test func aRedirectWithinTheOriginKeepsCredentials() async throws {
    let (server, seen) = try await recorder()
    server.handle("GET", "/api/hop") { _ in
      SampleResponse(status: 302, headers: ["Location": "/record"])
    }
    _ = try await client(of: server).response(for: .get("hop"))
    await server.stop()
    #expect(seen.all.first?["authorization"] == "Bearer secret-token")
    #expect(seen.all.first?["x-shelf"] == "shelf-42")
  }

  @Test func aSeeOtherTurnsIntoAGet() async throws {
    let (server, seen) = try await recorder()
    server.handle("DELETE", "/api/shelf/1") { _ in
      SampleResponse(status: 303, headers: ["Location": "/record"])
    }
    let response = try await client(of: server).response(for: .delete("shelf/1"))
    await server.stop()
    #expect(response.status == 200)
    #expect(seen.all.count == 1)
  }

  @Test(arguments: [307, 302])
  func aRedirectedPostWithABodyIsStoppedAndReported(status: Int) async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let received = Recorder<Data>()
    server.handle("POST", "/api/submit") { _ in
      SampleResponse(status: status, headers: ["Location": "/landing"])
    }
    for method in ["POST", "GET"] {
      server.handle(method, "/landing") { request in
        received.append(request.body)
        return htmlResponse("{}")
      }
    }
    let error = await apiError {
      try await client(of: server).response(
        for: .post(
          "submit", body: .bytes(Data("{\"rating\": 5}".utf8), contentType: "application/json")))
    }
    await server.stop()

    guard case .redirectRefused(let route, let location, let reason) = error else {
      Issue.record("expected redirectRefused, got \(String(describing: error))")
      return
    }
    #expect(route == "POST submit")
    #expect(location.hasSuffix("/landing"))
    #expect(reason.contains("body"))
    #expect(received.all.isEmpty)
  }

  @Test func aRedirectLoopEnds() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    server.handle("GET", "/api/loop") { _ in
      SampleResponse(status: 302, headers: ["Location": "/api/loop"])
    }
    let error = await apiError { try await client(of: server).response(for: .get("loop")) }
    await server.stop()
    guard case .redirectRefused(_, _, let reason) = error else {
      Issue.record("expected redirectRefused, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("more than 10 redirects"))
    #expect(server.responder.requests(to: "loop") == 11)
  }

  @Test func theTransportFollowsNoRedirectItself() async throws {
    let (server, seen) = try await recorder()
    server.handle("GET", "/hop") { _ in
      SampleResponse(status: 301, headers: ["Location": "/record"])
    }
    let response = try await fetch(try #require(URL(string: "http://127.0.0.1:\(server.port)/hop")))
    await server.stop()
    #expect(response.status == 301)
    #expect(response.headerFields[.location] == "/record")
    #expect(seen.all.isEmpty)
  }

  @Test func aBasicChallengeReturnsThe401InsteadOfHanging() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    server.handle("GET", "/private") { _ in
      SampleResponse(
        status: 401, headers: ["WWW-Authenticate": "Basic realm=\"movies\""], body: Data("no".utf8))
    }
    // The deadline's clock never moves: a 401 can only come back because the challenge was
    // left unanswered, never because a timeout ended the wait (which would be `timedOut`).
    let deadline = TestClock()
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/private"))
    let response = try await PlatformTransport(configuration: .loopbackTests, clock: deadline).send(
      HTTPRequest(.get, url), body: nil)
    await server.stop()
    #expect(response.status == 401)
    #expect(String(decoding: response.body, as: UTF8.self) == "no")
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func cancellingATaskMidRequestEndsIt(route: LoopbackApi.Route) async throws {
    let server = TestClock()
    let deadline = TestClock()
    try await withLoopbackApi(
      route, routes: .sampleMovies(), options: heldBack(by: server), deadlineClock: deadline
    ) {
      harness in
      // Cancel once the request is held at the server, so it is truly in flight.
      await expectCancellation(
        of: { try await harness.movies.movie(id: 1) }, once: { await server.waitForSleepers() })
      #expect(harness.server.responder.requests(to: "movies/1") == 1)
    }
  }

  @Test func anAnswerSlowerThanTheDeadlineTimesOut() async throws {
    let server = TestClock()
    let deadline = TestClock()
    var configuration = PlatformTransport.Configuration()
    configuration.resourceTimeout = .milliseconds(300)
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: heldBack(by: server), transport: configuration, deadlineClock: deadline
    ) { harness in
      let call = Task { await apiError { try await harness.movies.movie(id: 2) } }
      await server.waitForSleepers()  // the request is at the server, held
      await deadline.waitForSleepers()  // the watchdog is armed
      #expect(deadline.sleeps == [.milliseconds(300)])
      deadline.advance(by: .milliseconds(300))
      let error = await call.value
      guard case .timedOut(let route, "127.0.0.1") = error, route == .movie(id: 2) else {
        Issue.record("expected timedOut, got \(String(describing: error))")
        return
      }
      #expect(error?.failure == .unreachable)
    }
  }

  @Test func anIPv6LiteralIsReachedAsItIs() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies(), host: "::1")
    let url = try #require(URL(string: "http://[::1]:\(server.port)/api/movies/2"))
    let response = try await fetch(url)
    await server.stop()
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self).contains("Rogue One"))
  }

  @Test func aConnectionRefusedIsTransient() async throws {
    let url = try urlOfStoppedServer().appendingPathComponent("movies/1")
    await #expect(
      throws: TransportError.cannotConnect(host: "127.0.0.1", reason: "connection refused")
    ) {
      try await fetch(url)
    }
  }
}

#if !canImport(Darwin)
  /// What only the curl transport promises.
  @Suite(.timeLimit(.minutes(1))) struct CurlTransportTests {
    @Test func aBodyOverTheLimitEndsTheExchange() async throws {
      var configuration = CurlTransport.Configuration()
      configuration.maximumBodyBytes = 100
      let server = try await FixtureServer.start(routes: .sampleMovies())
      let url = server.baseURL.appendingPathComponent("movies/2")
      let small = try await CurlTransport(configuration: .loopbackTests).send(
        HTTPRequest(.get, url), body: nil)
      await #expect(throws: TransportError.tooLarge(host: "127.0.0.1", limit: 100)) {
        try await CurlTransport(configuration: configuration).send(
          HTTPRequest(.get, url), body: nil)
      }
      await server.stop()
      #expect(small.body.count > 100)
    }

    /// On the real clock libcurl keeps the whole-exchange deadline itself, and the engine's
    /// thread must wake for libcurl's timer though no socket ever becomes ready: this waits
    /// at least the 100 ms for real, nothing else here does (later under load, which is fine:
    /// only a deadline that never fires would fail it, at the suite's time limit).
    @Test func libcurlsOwnDeadlineEndsAnAnswerThatNeverComes() async throws {
      let held = TestClock()
      let server = try await FixtureServer.start(
        options: heldBack(by: held), routes: .sampleMovies())
      var configuration = CurlTransport.Configuration()
      configuration.resourceTimeout = .milliseconds(100)
      let transport = CurlTransport(configuration: configuration)
      await #expect(throws: TransportError.timedOut(host: "127.0.0.1")) {
        try await transport.send(
          HTTPRequest(.get, server.baseURL.appendingPathComponent("movies/1")), body: nil)
      }
      held.advance(by: .seconds(30))  // lets the held answer go, so the server stops
      await server.stop()
    }

    @Test func manyRequestsAtOnceThroughOneTransportAllArrive() async throws {
      var configuration = CurlTransport.Configuration()
      configuration.maximumConnectionsPerHost = 3
      let transport = CurlTransport(configuration: configuration)
      let server = try await FixtureServer.start(routes: .sampleMovies())
      let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
        for id in 1...40 {
          group.addTask {
            let url = server.baseURL.appendingPathComponent("movies/\(id % 5 + 1)")
            return try await transport.send(HTTPRequest(.get, url), body: nil).status
          }
        }
        return try await group.reduce(into: [Int]()) { $0.append($1) }
      }
      #expect(statuses.count == 40)
      #expect(Set(statuses) == [200])
      #expect(server.connectionsAccepted <= 3)
      await server.stop()
    }

    @Test func aMissingLibraryIsOneSentenceNamingItAndThePackage() async throws {
      var configuration = CurlTransport.Configuration()
      configuration.library = "libcurl-missing.so.9"
      let url = try #require(URL(string: "http://127.0.0.1:1/"))
      let thrown = await #expect(throws: TransportError.self) {
        try await CurlTransport(configuration: configuration).send(
          HTTPRequest(.get, url), body: nil)
      }
      guard case .unavailable(let reason) = thrown else {
        Issue.record("expected unavailable, got \(String(describing: thrown))")
        return
      }
      #expect(reason.hasPrefix("libcurl-missing.so.9 could not be loaded ("))
      #expect(reason.contains("apt-get install libcurl4"))
      #expect(!reason.contains("\n"))
    }

    @Test func postsCarryTheirBodyAndNoHeaderOfCurlsOwn() async throws {
      let server = try await FixtureServer.start(routes: .sampleMovies())
      let seen = Recorder<SampleRequest>()
      server.handle("PUT", "/api/shelf") { request in
        seen.append(request)
        return htmlResponse("{}")
      }
      var request = HTTPRequest(.put, server.baseURL.appendingPathComponent("shelf"))
      request.headerFields[.contentType] = "application/json"
      let body = Data(String(repeating: "x", count: 5000).utf8)
      let response = try await CurlTransport(configuration: .loopbackTests).send(
        request, body: .bytes(body))
      await server.stop()
      #expect(response.status == 200)
      let received = try #require(seen.all.first)
      #expect(received.body == body)
      #expect(received.headers["content-type"] == "application/json")
      #expect(received.headers["expect"] == nil)
      #expect(received.headers["accept"] == nil || received.headers["accept"] == "*/*")
    }

    @Test func aHeaderTooLargeIsSaidAsSuchAndNotRetried() async throws {
      let server = try await FixtureServer.start(routes: .sampleMovies())
      let sent = Counter()
      server.handle("GET", "/api/big") { _ in
        _ = sent.increment()
        return SampleResponse(
          status: 200, headers: ["X-Padding": String(repeating: "p", count: 150_000)], body: Data())
      }
      let client = ApiClient(
        context: InMemoryApiContext(
          environment: try ApiEnvironment(name: "local", baseURL: server.baseURL)),
        transport: PlatformTransport(configuration: .loopbackTests), retriers: [.backoff],
        clock: TestClock(immediate: true))
      let error = await apiError { try await client.response(for: .get("big")) }
      await server.stop()
      guard case .headerTooLarge? = error else {
        Issue.record("expected a header too large, got \(String(describing: error))")
        return
      }
      #expect("\(error.map(String.init(describing:)) ?? "")".contains("header larger"))
      #expect(sent.value == 1)
    }
  }
#endif

extension TransportTests {
  /// `doctor`'s probe: any status is an answer (the base URL's own 404 is one), and an api
  /// that does not answer is given up on at the probe's limit, on the deadline's clock, as
  /// `timedOut`.
  @Test func aProbeTakesAnyStatusAsAnAnswerAndGivesUpAtItsLimit() async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      let status = try await harness.client.probe()
      #expect(status == 404)
    }
    let server = TestClock()
    let deadline = TestClock()
    try await withLoopbackApi(routes: .sampleMovies(), options: heldBack(by: server)) { harness in
      let client = ApiClient(
        context: harness.context, transport: harness.client.transport, deadlineClock: deadline)
      let probing = Task { await apiError { try await client.probe(within: .seconds(5)) } }
      await server.waitForSleepers()  // the request is at the server, held
      await deadline.waitForSleepers()  // the limit is armed
      #expect(deadline.sleeps == [.seconds(5)])
      deadline.advance(by: .seconds(5))
      let error = await probing.value
      guard case .timedOut(let route, "127.0.0.1") = error, route.path.isEmpty else {
        Issue.record("expected timedOut, got \(String(describing: error))")
        return
      }
      #expect("\(route)" == "GET the base URL")
    }
  }
}
