import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@testable import Api

/// Kernel's built-in authenticators over real loopback HTTP, against the fixture server's
/// OAuth 2.0 token endpoint (`OAuthServer`): the server's clock and the client's wall clock
/// move together by hand, so an expiry is reached without waiting.
@Suite(.timeLimit(.minutes(1))) struct AuthenticatorsTests {
  /// Access tokens live ten minutes; every movie route needs one.
  private static func options(_ clock: TestClock, oauth: OAuthServer = OAuthServer())
    -> SampleApiResponder.Options
  {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.clock = clock
    var server = oauth
    server.accessTokenLifetime = .seconds(600)
    options.oauth = server
    return options
  }

  private static func oauth2(
    _ authenticator: OAuth2Authenticator, _ wall: TestWallClock
  ) -> AuthenticationInterceptor {
    AuthenticationInterceptor(authenticator, name: "oauth2", wallClock: wall.wallClock)
  }

  /// Both clocks on by `seconds`.
  private static func advance(_ server: TestClock, _ wall: TestWallClock, seconds: Int) {
    server.advance(by: .seconds(seconds))
    wall.advance(TimeInterval(seconds))
  }

  private static func stored(_ context: any ApiContext) throws -> OAuth2Authenticator.Token {
    try #require(context.credential).decode(OAuth2Authenticator.Token.self)
  }

  /// A loopback api with the password grant, logged in as `u`.
  private static func loggedIn(
    _ server: TestClock, _ wall: TestWallClock, _ body: (LoopbackApi) async throws -> Void
  ) async throws {
    let password = OAuth2Authenticator(grant: .password, clientId: "kernel")
    try await withLoopbackApi(
      routes: .sampleMovies(extraMovies: 50),
      options: Self.options(server), authentication: Self.oauth2(password, wall)
    ) { api in
      try await api.client.login(Login(username: "u", password: "pw"))
      try await body(api)
    }
  }

  @Test func fiftyRequestsAcrossAnExpiryMakeOneRefreshBeforeSendingAndKeepTheRotatedToken()
    async throws
  {
    let server = TestClock()
    let wall = TestWallClock()
    try await Self.loggedIn(server, wall) { api in
      #expect(api.responder.grants("password") == 1)
      let first = try Self.stored(api.context)
      #expect(first.expiresAt == wall.now.addingTimeInterval(600))

      // Past the expiry on both clocks: the credential is refreshed before anything is sent.
      Self.advance(server, wall, seconds: 601)
      let movies = try await withThrowingTaskGroup(of: Movie.self) { group in
        for id in 1...50 { group.addTask { try await api.movies.movie(id: id) } }
        return try await group.reduce(into: [Movie]()) { $0.append($1) }
      }
      #expect(movies.count == 50)
      #expect(api.responder.grants("refresh_token") == 1)
      #expect(api.responder.expiredTokensRefused == 0)  // no request went with the old token
      let second = try Self.stored(api.context)
      #expect(second.refreshToken != first.refreshToken)  // rotated, and kept

      // Within the margin (a minute before expiry) the next refresh uses the rotated token:
      // the server refused the first one when it rotated it.
      Self.advance(server, wall, seconds: 550)
      #expect(try await api.movies.movie(id: 1).id == 1)
      #expect(api.responder.grants("refresh_token") == 2)
      #expect(api.responder.expiredTokensRefused == 0)
    }
  }

  @Test func invalidGrantOnARefreshDropsTheCredentialAndSaysToLogInAgain() async throws {
    let server = TestClock()
    let wall = TestWallClock()
    try await Self.loggedIn(server, wall) { api in
      api.responder.revokeRefreshTokens()
      Self.advance(server, wall, seconds: 601)
      let error = await apiError { try await api.movies.movie(id: 1) }
      guard case .authenticationFailed(let route, let reason, _)? = error else {
        Issue.record("expected authenticationFailed, got \(String(describing: error))")
        return
      }
      #expect(route == .movie(id: 1))
      #expect(reason.contains("invalid_grant") && reason.contains("log in again"), "\(reason)")
      #expect(error?.failure == .authentication)  // exit 77
      #expect(api.context.credential == nil)
      #expect(api.responder.requests(to: "movies/1") == 0)
    }
  }

  @Test func aWrongPasswordIsRefusedInOneSentenceAndNothingIsKept() async throws {
    let password = OAuth2Authenticator(grant: .password, clientId: "kernel")
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.options(TestClock()), authentication: Self.oauth2(password, TestWallClock())
    ) { api in
      await #expect(
        throws: AuthenticationError.loginRequired(
          "Could not log in to local: the token endpoint answered invalid_grant (wrong user name or password)"
        )
      ) {
        try await api.client.login(Login(username: "u", password: "nope"))
      }
      #expect(api.context.credential == nil)
    }
  }

  /// A server with no token endpoint answers 404 with an `error` of its own: not an OAuth 2.0
  /// error (those come with 400 or 401), so the sentence says the status and its words.
  @Test func aTokenPathThatIsNotFoundSaysSoWithTheServersWords() async throws {
    let password = OAuth2Authenticator(grant: .password, clientId: "kernel")
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.options(TestClock()), authentication: Self.oauth2(password, TestWallClock())
    ) { api in
      api.server.handle("POST", "/api/oauth/token") { _ in
        SampleResponse(
          status: 404, headers: ["Content-Type": "application/json"],
          body: Data(#"{"error": "no route answers POST /api/oauth/token"}"#.utf8))
      }
      await #expect(
        throws: AuthenticationError.invalidAnswer(
          "Could not log in to local: POST oauth/token answered HTTP 404 (no route answers POST"
            + " /api/oauth/token) instead of a token")
      ) {
        try await api.client.login(Login(username: "u", password: "pw"))
      }
      #expect(api.context.credential == nil)
    }
  }

  /// A token endpoint that echoes the password in its `error_description`: the sentence shows
  /// it redacted.
  @Test func aPasswordEchoedByTheTokenEndpointIsRedacted() async throws {
    let password = OAuth2Authenticator(grant: .password, clientId: "kernel")
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.options(TestClock()), authentication: Self.oauth2(password, TestWallClock())
    ) { api in
      api.server.handle("POST", "/api/oauth/token") { request in
        let sent = String(decoding: request.body, as: UTF8.self)
        return SampleResponse(
          status: 400, headers: ["Content-Type": "application/json"],
          body: Data(
            #"{"error": "invalid_request", "error_description": "bad form: \#(sent)"}"#.utf8))
      }
      do {
        try await api.client.login(Login(username: "u", password: "Hunter2-pw"))
        Issue.record("expected a refusal")
      } catch {
        #expect(!"\(error)".contains("Hunter2-pw"), "\(error)")
        #expect("\(error)".contains("password=REDACTED"), "\(error)")
      }
    }
  }

  /// What a token endpoint may answer that Kernel must not keep as it is: a token too large to
  /// send, an `expires_in` as text, and one no date can hold.
  @Test(arguments: [
    (
      #"{"access_token": "\#(String(repeating: "a", count: 10_000))", "token_type": "bearer"}"#,
      "refused"
    ),
    (#"{"access_token": "ok", "token_type": "bearer", "expires_in": "3600"}"#, "3600"),
    (#"{"access_token": "ok", "token_type": "bearer", "expires_in": -1e300}"#, "none"),
    (#"{"access_token": "ok", "token_type": "bearer", "expires_in": 1e300}"#, "ten years"),
  ])
  func aTokenAnswerIsCheckedAndItsLifetimeKeptWithinReason(body: String, kept: String) async throws
  {
    let password = OAuth2Authenticator(grant: .password, clientId: "kernel")
    let wall = TestWallClock()
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.options(TestClock()), authentication: Self.oauth2(password, wall)
    ) { api in
      api.server.handle("POST", "/api/oauth/token") { _ in
        SampleResponse(
          status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
      }
      let login: Result<StoredCredential, any Error>
      do {
        login = .success(try await api.client.login(Login(username: "u", password: "pw")))
      } catch {
        login = .failure(error)
      }
      switch kept {
      case "refused":
        guard case .failure(let error) = login,
          case .decoding(_, let field, _)? = error as? ApiError
        else {
          Issue.record("expected a refused token, got \(login)")
          return
        }
        #expect(field == "access_token")
        #expect(api.context.credential == nil)
      default:
        #expect((try? login.get()) != nil, "\(login)")
        // What was kept reads back as it was written.
        let token = try Self.stored(api.context)
        let lifetime = token.expiresAt.map { $0.timeIntervalSince(wall.now) }
        switch kept {
        case "3600": #expect(lifetime == 3600)
        case "none": #expect(lifetime == nil)
        default: #expect(lifetime == OAuth2Authenticator.longestLifetime)
        }
      }
    }
  }

  @Test func clientCredentialsWithBasicClientAuthNeedNoLogin() async throws {
    var oauth = OAuthServer()
    oauth.clientSecret = "s3cret"
    let clientCredentials = OAuth2Authenticator(
      grant: .clientCredentials, clientId: "kernel", clientSecret: "s3cret",
      clientAuthentication: .basic)
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.options(TestClock(), oauth: oauth),
      authentication: Self.oauth2(clientCredentials, TestWallClock())
    ) { api in
      let seen = Recorder<[String: String]>()
      api.server.handle("POST", "/api/oauth/token") { request in
        seen.append(request.headers)
        return await api.responder.original(request)
      }
      let movies = Recorder<String?>()
      api.server.handle("GET", "/api/movies/{id}") { request in
        movies.append(request.headers["authorization"])
        return await api.responder.original(request)
      }
      // No credential yet: the grant gets one before the first request, which never goes bare.
      let second = try await api.movies.movie(id: 2)
      #expect(second.id == 2)
      #expect(api.responder.grants("client_credentials") == 1)
      #expect(movies.all.count == 1)
      #expect(movies.all.first??.hasPrefix("Bearer ") == true, "\(movies.all)")
      let basic = "Basic " + Data("kernel:s3cret".utf8).base64EncodedString()
      #expect(seen.all.first?["authorization"] == basic)
      let third = try await api.movies.movie(id: 3)
      #expect(third.id == 3)
      #expect(api.responder.grants("client_credentials") == 1)
    }
  }

  @Test func anApiKeyTravelsInItsHeaderOrQueryAndTheTraceRedactsIt() async throws {
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
      for placement in [ApiKeyAuthenticator.Placement.header("X-Api-Key"), .query("api_key")] {
        let transport = RecordingTransport(PlatformTransport(configuration: .loopbackTests))
        let trace = Recorder<String>()
        let client = ApiClient(
          context: InMemoryApiContext(environment: environment), transport: transport,
          authentication: AuthenticationInterceptor(
            ApiKeyAuthenticator(placement, key: "k-1234"), name: "apiKey"),
          retriers: [], monitors: [LogMonitor { trace.append($0) }])
        #expect(try await client.response(ApiRequest<Movie>(.movie(id: 1))).value.id == 1)
        let sent = try #require(transport.requests.all.first)
        switch placement {
        case .header: #expect(sent.headerFields[HTTPField.Name("X-Api-Key")!] == "k-1234")
        case .query: #expect(sent.path?.hasSuffix("?api_key=k-1234") == true)
        }
        #expect(!trace.all.isEmpty)
        #expect(trace.all.allSatisfy { !$0.contains("k-1234") }, "\(trace.all)")
        #expect(client.secretHeaders.contains("x-api-key") == (placement == .header("X-Api-Key")))
      }
    }
  }

  @Test func aRefusedBasicPasswordIsTheAnswerInOneSentenceAndNothingElseIsSent() async throws {
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let seen = Recorder<[String: String]>()
      server.handle("GET", "/api/movies/1") { request in
        seen.append(request.headers)
        return SampleResponse(
          status: 401, headers: ["WWW-Authenticate": #"Basic realm="api""#], body: Data())
      }
      var parts = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
      parts.user = "reader"
      parts.password = "wrong"
      let environment = try ApiEnvironment(name: "local", baseURL: try #require(parts.url))
      let client = ApiClient(
        context: InMemoryApiContext(environment: environment),
        transport: PlatformTransport(configuration: .loopbackTests),
        authentication: AuthenticationInterceptor(BasicAuthenticator(), name: "basic"))
      let error = await apiError { try await client.response(ApiRequest<Movie>(.movie(id: 1))) }
      #expect(
        error?.description
          == "GET movies/1 was refused for want of a valid credential: the api refused the HTTP"
          + " Basic user and password (HTTP 401).")
      #expect(server.responder.totalRequests == 1)
      let basic = "Basic " + Data("reader:wrong".utf8).base64EncodedString()
      #expect(seen.all.map { $0["authorization"] } == [basic])
    }
  }

  @Test func withNoAuthenticatorA401IsTheAnswerAndNothingElseIsSent() async throws {
    try await withLoopbackApi(
      routes: .sampleMovies(), options: Self.options(TestClock()), authentication: nil
    ) { api in
      let error = await apiError { try await api.movies.movie(id: 1) }
      #expect(
        error?.description
          == "GET movies/1 was refused for want of a valid credential: the api answered HTTP 401,"
          + " asking for Bearer.")
      #expect(error?.failure == .authentication)
      #expect(api.responder.totalRequests == 1)
    }
  }

  @Test func aTokenURLIsBelowTheBaseURLOrAbsoluteOnItsOriginOnly() throws {
    let environment = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:8080/api/v1/")
    let relative = try OAuth2Authenticator(grant: .password).tokenRoute(in: environment)
    #expect(
      relative.url(in: environment).absoluteString == "http://127.0.0.1:8080/api/v1/oauth/token")
    let absolute = try OAuth2Authenticator(
      tokenURL: "http://127.0.0.1:8080/oauth/token", grant: .password
    ).tokenRoute(in: environment)
    #expect(absolute.url(in: environment).absoluteString == "http://127.0.0.1:8080/oauth/token")
    #expect(throws: AuthenticationError.self) {
      try OAuth2Authenticator(tokenURL: "http://127.0.0.1:9090/oauth/token", grant: .password)
        .tokenRoute(in: environment)
    }
  }
}
