import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@testable import Api

/// Notes its name and the try number on every adaptation.
private struct NotingAdapter: RequestAdapter {
  let name: String
  let notes: Recorder<String>
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    notes.append("\(name)\(attempt.number)")
    return request
  }
}

private struct RefusingAdapter: RequestAdapter {
  struct Refused: Error {}
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    throw Refused()
  }
}

@Suite(.timeLimit(.minutes(1))) struct RequestAdapterTests {
  @Test func adaptersRunInOrderBeforeEveryTry() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 1
    let notes = Recorder<String>()
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: options,
      adapters: [NotingAdapter(name: "a", notes: notes), NotingAdapter(name: "b", notes: notes)],
      retriers: [.backoff], clock: TestClock(immediate: true)
    ) { harness in
      _ = try await harness.movies.movie(id: 1)
    }
    #expect(notes.all == ["a1", "b1", "a2", "b2"])
  }

  @Test func aThrowingAdapterStopsTheRequestBeforeItIsSent() async throws {
    let notes = Recorder<String>()
    try await withLoopbackApi(
      routes: .sampleMovies(),
      adapters: [
        NotingAdapter(name: "a", notes: notes), RefusingAdapter(),
        NotingAdapter(name: "b", notes: notes),
      ]
    ) { harness in
      await #expect(throws: RefusingAdapter.Refused.self) { try await harness.movies.movie(id: 1) }
      #expect(harness.server.responder.totalRequests == 0)
    }
    #expect(notes.all == ["a1"])
  }

  @Test func defaultHeadersNameThePackage() async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      let seen = recordHeaders(at: "/api/movies/1", of: harness.server)
      _ = try? await harness.movies.movie(id: 1)
      let headers = try #require(seen.all.first)
      #expect(headers["accept"] == "application/json")
      #expect(headers["user-agent"] == "Kernel/\(KernelVersion.current) (Linux)")
    }
  }

  @Test func theTokenGoesInTheEnvironmentsHeaderAndScheme() async throws {
    let talkStyle = PlainTokenAuthenticator(header: "AUTH_TOKEN", scheme: nil)
    try await withLoopbackApi(routes: .sampleMovies(), authentication: .plainToken(talkStyle)) {
      harness in
      let seen = recordHeaders(at: "/api/movies/1", of: harness.server)
      harness.context.store(token: AuthToken("t0k3n"))
      _ = try? await harness.movies.movie(id: 1)
      #expect(seen.all.first?["auth_token"] == "t0k3n")
      #expect(seen.all.first?["authorization"] == nil)
    }
  }

  @Test func theAuthenticationNeverAddsTheTokenForAnotherOrigin() async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      harness.context.store(token: AuthToken("secret"))
      let client = harness.client
      let authentication = try #require(client.authentication)
      let attempt = try await firstAttempt(of: client)
      for other in [
        "http://127.0.0.1:1/api/movies/1", "https://127.0.0.1:\(harness.server.port)/api/",
        "http://localhost:\(harness.server.port)/api/",
      ] {
        let request = HTTPRequest(.get, try #require(URL(string: other)))
        let adapted = try await authentication.authenticate(request, for: attempt)
        #expect(adapted.headerFields[.authorization] == nil, "\(other)")
      }
      let own = HTTPRequest(.get, Route.movie(id: 1).url(in: harness.context.environment))
      #expect(
        try await authentication.authenticate(own, for: attempt).headerFields[.authorization]
          == "Bearer secret")
    }
  }

  @Test func theApiKeyAdapterSendsTheEnvironmentsKeyInASecretHeaderOrNamesTheSetting() async throws
  {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      let own = harness.context.environment
      func client(key: String?) throws -> ApiClient {
        let environment = try ApiEnvironment(
          name: "local", baseURL: own.baseURL, values: key.map { ["apiKey": $0] } ?? [:])
        return ApiClient(
          context: InMemoryApiContext(environment: environment),
          transport: harness.client.transport,
          adapters: [ApiKeyAdapter(header: "X-Library-Card")])
      }
      let seen = recordHeaders(at: "/api/movies/1", of: harness.server)
      let keyed = try client(key: "k-local")
      _ = try? await keyed.response(for: .movie(id: 1))  // the recorder answers 404
      #expect(seen.all.first?["x-library-card"] == "k-local")
      #expect(keyed.secretHeaders.contains("x-library-card"))

      let error = await #expect(throws: AuthenticationError.self) {
        try await client(key: nil).response(for: .movie(id: 1))
      }
      #expect("\(error.map { $0 } as Any)".contains("set environments.local.apiKey"))
      #expect(seen.all.count == 1)
    }
  }

  /// The attempt a client hands its adapters for its first try, caught by a probing adapter.
  private func firstAttempt(of client: ApiClient) async throws -> Attempt {
    let caught = Recorder<Attempt>()
    struct Probe: RequestAdapter {
      let caught: Recorder<Attempt>
      func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
        caught.append(attempt)
        throw CancellationError()
      }
    }
    let probing = ApiClient(
      context: client.context, transport: client.transport, adapters: [Probe(caught: caught)])
    _ = try? await probing.response(for: .movie(id: 1))
    return try #require(caught.all.first)
  }
}
