import Api
import Foundation
import KernelTesting
import SampleApi
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

@Suite(.timeLimit(.minutes(1))) struct URLSessionTransportTests {
  /// A server that records the headers of every request to `/record`.
  private func recorder() async throws -> (FixtureServer, Recorder<[String: String]>) {
    let server = try await FixtureServer.start()
    let seen = Recorder<[String: String]>()
    server.handle("GET", "/record") { request in
      seen.append(request.headers)
      return htmlResponse("{}")
    }
    return (server, seen)
  }

  private func request(_ url: URL, token: String = "secret-token") -> URLRequest {
    var request = URLRequest(url: url)
    request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    request.setValue(token, forHTTPHeaderField: "AUTH_TOKEN")
    return request
  }

  @Test func aRedirectToAnotherPortCarriesNoCredentials() async throws {
    let (target, seen) = try await recorder()
    let origin = try await FixtureServer.start()
    origin.handle("GET", "/hop") { _ in
      SampleResponse(status: 302, headers: ["Location": "http://127.0.0.1:\(target.port)/record"])
    }
    var configuration = URLSessionTransport.Configuration()
    configuration.credentialHeaders = ["AUTH_TOKEN"]
    let transport = URLSessionTransport(configuration: configuration)
    let url = try #require(URL(string: "http://127.0.0.1:\(origin.port)/hop"))
    let response = try await transport.send(request(url))
    await origin.stop()
    await target.stop()

    #expect(response.status == 200)
    let headers = try #require(seen.all.first)
    #expect(headers["authorization"] == nil)
    #expect(headers["auth_token"] == nil)
  }

  @Test func aRedirectWithinTheOriginKeepsCredentials() async throws {
    let (server, seen) = try await recorder()
    server.handle("GET", "/hop") { _ in
      SampleResponse(status: 302, headers: ["Location": "http://127.0.0.1:\(server.port)/record"])
    }
    let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/hop"))
    _ = try await URLSessionTransport().send(request(url))
    await server.stop()
    #expect(seen.all.first?["authorization"] == "Bearer secret-token")
  }

  @Test(arguments: [307, 302])
  func aRedirectedPostWithABodyIsStoppedAndReported(status: Int) async throws {
    let server = try await FixtureServer.start()
    let received = Recorder<Data>()
    server.handle("POST", "/submit") { _ in
      SampleResponse(
        status: status, headers: ["Location": "http://127.0.0.1:\(server.port)/landing"])
    }
    server.handle("POST", "/landing") { request in
      received.append(request.body)
      return htmlResponse("{}")
    }
    server.handle("GET", "/landing") { request in
      received.append(request.body)
      return htmlResponse("{}")
    }
    var post = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/submit")))
    post.httpMethod = "POST"
    post.httpBody = Data("{\"rating\": 5}".utf8)
    var thrown: (any Error)?
    do { _ = try await URLSessionTransport().send(post) } catch { thrown = error }
    await server.stop()

    guard case .redirectRefused(let from, let to, let reason) = thrown as? TransportError else {
      Issue.record("expected redirectRefused, got \(String(describing: thrown))")
      return
    }
    #expect(from.hasSuffix("/submit"))
    #expect(to.hasSuffix("/landing"))
    #expect(reason.contains("without its body"))
    #expect(received.all.isEmpty)
  }

  @Test func aRedirectLoopEnds() async throws {
    let server = try await FixtureServer.start()
    server.handle("GET", "/loop") { _ in
      SampleResponse(status: 302, headers: ["Location": "http://127.0.0.1:\(server.port)/loop"])
    }
    var thrown: (any Error)?
    do {
      _ = try await URLSessionTransport().send(
        URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/loop"))))
    } catch { thrown = error }
    await server.stop()
    guard case .redirectRefused(_, _, let reason) = thrown as? TransportError else {
      Issue.record("expected redirectRefused, got \(String(describing: thrown))")
      return
    }
    #expect(reason.contains("redirects"))
  }

  @Test func aBasicChallengeReturnsThe401InsteadOfHanging() async throws {
    let server = try await FixtureServer.start()
    server.handle("GET", "/private") { _ in
      SampleResponse(
        status: 401, headers: ["WWW-Authenticate": "Basic realm=\"movies\""], body: Data("no".utf8))
    }
    // The deadline's clock never moves: a 401 can only come back because the challenge was
    // answered, never because a timeout ended the wait (which would be `timedOut`).
    let deadline = TestClock()
    let response = try await URLSessionTransport(clock: deadline)
      .send(URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(server.port)/private"))))
    await server.stop()
    #expect(response.status == 401)
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func cancellingATaskMidRequestEndsIt(route: LoopbackApi.Route) async throws {
    let server = TestClock()
    let deadline = TestClock()
    try await withLoopbackApi(route, options: heldBack(by: server), deadlineClock: deadline) {
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
    var configuration = URLSessionTransport.Configuration()
    configuration.resourceTimeout = .milliseconds(300)
    try await withLoopbackApi(
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
}
