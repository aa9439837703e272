import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@testable import Api

/// A credential refreshed by several holders of one saved context (two runs of an app on one
/// data dir): one refresh at a time across them, a rotated refresh token spent once, a logout
/// never undone, and a token endpoint that cannot be reached taken for the api being
/// unreachable, not for a refused credential. Two `PersistentApiContext`s on one file stand for
/// two processes: the folder lock is taken through descriptors of their own, as processes do.
@Suite(.timeLimit(.minutes(1))) struct CredentialRefreshTests {
  /// A server whose access tokens live ten minutes on `clock`, rotating refresh tokens.
  private static func options(_ clock: TestClock) -> SampleApiResponder.Options {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.clock = clock
    var oauth = OAuthServer()
    oauth.accessTokenLifetime = .seconds(600)
    oauth.rotatesRefreshTokens = true
    options.oauth = oauth
    return options
  }

  /// A client of `server` whose context is saved in `file`, as one run of an app opens it.
  private static func run(_ server: FixtureServer, _ file: URL, wall: TestWallClock) throws
    -> ApiClient
  {
    let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
    let context = try PersistentApiContext(
      file: file, defaultEnvironment: environment, environments: [environment], warn: { _ in })
    return ApiClient(
      context: context, transport: PlatformTransport(configuration: .loopbackTests),
      authentication: AuthenticationInterceptor(
        OAuth2Authenticator(grant: .password, clientId: "kernel"), name: "oauth2",
        wallClock: wall.wallClock))
  }

  private static func token(_ file: URL) throws -> OAuth2Authenticator.Token? {
    let data = try Data(contentsOf: file)
    let saved = try JSONDecoder().decode(ContextState.self, from: data)
    return try saved.credentials.values.first?.decode(OAuth2Authenticator.Token.self)
  }

  @Test(arguments: [2, 10])
  func runsRefreshingAnExpiredTokenAtOnceMakeOneGrantAndStayLoggedIn(runs: Int) async throws {
    let folder = try TemporaryDirectory("context")
    defer { folder.remove() }
    let file = folder.appending("context.json")
    let clock = TestClock()
    let wall = TestWallClock()
    try await withFixtureServer(routes: .sampleMovies(), options: Self.options(clock)) { server in
      try await Self.run(server, file, wall: wall).login(Login(username: "u", password: "pw"))
      let first = try #require(try Self.token(file))
      // Every run opens the saved context now, holding the same refresh token; then the access
      // token expires on the server's clock, so each run's request is refused once.
      let clients = try (0..<runs).map { _ in try Self.run(server, file, wall: wall) }
      clock.advance(by: .seconds(601))
      let movies = try await withThrowingTaskGroup(of: Int.self) { group in
        for client in clients {
          group.addTask { try await client.response(ApiRequest<Movie>(.movie(id: 1))).value.id }
        }
        return try await group.reduce(into: [Int]()) { $0.append($1) }
      }
      #expect(movies == Array(repeating: 1, count: runs))
      #expect(server.responder.grants("refresh_token") == 1)
      let last = try #require(try Self.token(file))
      #expect(last.refreshToken != first.refreshToken)
      #expect(last.identity == "u")
    }
  }

  @Test func aLogoutDuringAnotherRunsRefreshStaysALogout() async throws {
    let folder = try TemporaryDirectory("context")
    defer { folder.remove() }
    let file = folder.appending("context.json")
    let clock = TestClock()
    let wall = TestWallClock()
    try await withFixtureServer(routes: .sampleMovies(), options: Self.options(clock)) { server in
      try await Self.run(server, file, wall: wall).login(Login(username: "u", password: "pw"))
      let refreshing = try Self.run(server, file, wall: wall)
      let entered = Counter()
      let gate = Counter()
      server.handle("POST", "/api/oauth/token") { request in
        _ = entered.increment()
        await gate.reach(1)
        return await server.responder.original(request)
      }
      clock.advance(by: .seconds(601))
      let read = Task { try await refreshing.response(ApiRequest<Movie>(.movie(id: 1))) }
      await entered.reach(1)
      // The logout of another run: it waits for the refresh under way, then removes what the
      // refresh stored.
      let logout = try Self.run(server, file, wall: wall)
      let loggedOut = Task {
        try await onThreadOfItsOwn { try logout.context.store(credential: nil) }
      }
      _ = gate.increment()
      try await loggedOut.value
      _ = try? await read.value
      #expect(try Self.token(file) == nil)
      let later = try Self.run(server, file, wall: wall)
      #expect(later.context.credential == nil)
    }
  }

  @Test func aRefreshThatFindsANewerCredentialStoredSendsNothing() async throws {
    let folder = try TemporaryDirectory("context")
    defer { folder.remove() }
    let file = folder.appending("context.json")
    let clock = TestClock()
    let wall = TestWallClock()
    try await withFixtureServer(routes: .sampleMovies(), options: Self.options(clock)) { server in
      try await Self.run(server, file, wall: wall).login(Login(username: "u", password: "pw"))
      let stale = try Self.run(server, file, wall: wall)
      let seen = stale.context.credential
      // Another run logs in again meanwhile: a newer credential is on disk.
      try await Self.run(server, file, wall: wall).login(Login(username: "u", password: "pw"))
      let newer = try #require(try Self.token(file))
      let outcome = try await stale.context.refreshCredential(replacing: seen) { _ in
        Issue.record("no refresh should run")
        throw AuthenticationError.revoked("refused")
      }
      guard case .changed(let stored?) = outcome else {
        Issue.record("expected the newer credential, got \(outcome)")
        return
      }
      #expect(try stored.decode(OAuth2Authenticator.Token.self) == newer)
      // A refusal of the credential a refresh saw drops that one alone: here, none is dropped.
      #expect(try Self.token(file) == newer)
      #expect(server.responder.grants("refresh_token") == 0)
    }
  }

  @Test func aTokenEndpointThatCannotBeReachedIsTheApiUnreachable() async throws {
    let folder = try TemporaryDirectory("context")
    defer { folder.remove() }
    let file = folder.appending("context.json")
    let clock = TestClock()
    let wall = TestWallClock()
    let client = try await withFixtureServer(routes: .sampleMovies(), options: Self.options(clock))
    { server in
      try await Self.run(server, file, wall: wall).login(Login(username: "u", password: "pw"))
      return try Self.run(server, file, wall: wall)
    }
    // The server is gone and the access token expired on the client's clock: the refresh
    // before sending cannot reach the token endpoint.
    wall.advance(601)
    do {
      _ = try await client.response(ApiRequest<Movie>(.movie(id: 1)))
      Issue.record("expected a failure")
    } catch {
      #expect(ServiceFailure.of(error) == .unreachable, "\(error)")
      #expect(!"\(error)".contains(".."), "\(error)")
      #expect("\(error)".contains("oauth/token"), "\(error)")
    }
    // Nothing was dropped: the credential waits for the api to come back.
    #expect(try Self.token(file)?.identity == "u")
  }

  @Test func aRefreshFailureSaysItsReasonOnceInOneSentence() async throws {
    let error = ApiError.authenticationFailed(
      route: .movie(id: 1),
      reason: "the oauth2 refresh failed: \(clause("POST oauth/token answered nothing."))")
    #expect(!"\(error)".contains(".."), "\(error)")
    #expect("\(error)".hasSuffix("answered nothing."), "\(error)")
  }
}
