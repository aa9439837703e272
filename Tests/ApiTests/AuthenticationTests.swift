import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

/// Counts calls from any thread.
final class Count: Sendable {
  private let value = Mutex(0)
  func increment() { value.withLock { $0 += 1 } }
  var current: Int { value.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(1))) struct AuthenticationTests {
  private static var requireAuth: SampleApiResponder.Options {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    return options
  }

  /// Fifty different movies at once, through `harness`.
  private func storm(_ harness: LoopbackApi) async -> [Result<Movie, any Error>] {
    await withTaskGroup(of: Result<Movie, any Error>.self) { group in
      for id in 1...50 {
        group.addTask {
          do { return .success(try await harness.movies.movie(id: id)) } catch {
            return .failure(error)
          }
        }
      }
      return await group.reduce(into: []) { $0.append($1) }
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func fiftyRequestsWithAnExpiredTokenCauseOneRefresh(kind: LoopbackApi.Route) async throws {
    try await withLoopbackApi(
      kind, routes: .sampleMovies(extraMovies: 50), options: Self.requireAuth, retriers: [.backoff]
    ) {
      harness in
      try await harness.client.login()
      let old = harness.context.token
      harness.server.responder.expireTokens()

      let results = await storm(harness)
      #expect(results.count == 50)
      #expect(results.allSatisfy { (try? $0.get()) != nil })
      #expect(harness.server.responder.requests(to: "auth") == 2)  // the login, then one refresh
      #expect(harness.context.token != old)
    }
  }

  @Test func whenTheRefreshFailsAllFiftyFailAndAuthIsCalledOnce() async throws {
    try await withLoopbackApi(
      routes: .sampleMovies(), options: Self.requireAuth, retriers: [.backoff]
    ) {
      harness in
      harness.context.store(token: AuthToken("expired-long-ago"))
      let authCalls = Counter()
      harness.server.handle("GET", "/api/auth") { _ in
        authCalls.increment()
        return htmlResponse("{\"error\": \"account locked\"}", status: 403)
      }

      let results = await storm(harness)
      #expect(authCalls.value == 1)
      for result in results {
        guard case .failure(let error) = result, case .authenticationFailed = error as? ApiError
        else {
          Issue.record("expected authenticationFailed, got \(result)")
          continue
        }
        #expect(ServiceFailure.of(error) == .authentication)
      }
      // No refresh starts again for the same credentials: another request fails at once.
      await #expect(throws: ApiError.self) { try await harness.movies.movie(id: 1) }
      #expect(authCalls.value == 1)
    }
  }

  @Test func newCredentialsAllowARefreshAgain() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), options: Self.requireAuth) { harness in
      harness.context.store(token: AuthToken("stale"))
      let fail = Mutex(true)
      harness.server.handle("GET", "/api/auth") { _ in
        if fail.withLock({ $0 }) { return htmlResponse("{}", status: 403) }
        return await harness.server.responder.original(SampleRequest(path: "/api/auth"))
      }
      await #expect(throws: ApiError.self) { try await harness.movies.movie(id: 1) }
      fail.withLock { $0 = false }
      harness.context.store(token: AuthToken("typed-in-again"))
      let fetched = try await harness.movies.movie(id: 1)
      #expect(fetched.id == 1)
    }
  }

  @Test func theSixthRefreshWithinFiveSecondsIsExcessiveAndTheWindowMovesOnItsClock()
    async throws
  {
    let clock = TestClock()
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: Self.requireAuth, authentication: .plainToken(clock: clock)
    ) { harness in
      try await harness.client.login()
      for round in 1...5 {
        harness.server.responder.expireTokens()
        let fetched = try await harness.movies.movie(id: round)
        #expect(fetched.id == round)
        clock.advance(by: .milliseconds(900))  // 4.5 s in all: still inside the window
      }
      harness.server.responder.expireTokens()
      let error = await apiError { try await harness.movies.movie(id: 6) }
      guard case .excessiveRefresh(let route, 5, 5) = error, route == .movie(id: 6) else {
        Issue.record("expected excessiveRefresh, got \(String(describing: error))")
        return
      }
      #expect(error?.failure == .authentication)
      #expect(harness.server.responder.requests(to: "auth") == 6)

      // Once the first refresh is more than 5 s old, one more may start.
      clock.advance(by: .seconds(1))
      #expect(try await harness.movies.movie(id: 6).id == 6)
      #expect(harness.server.responder.requests(to: "auth") == 7)
    }
  }

  @Test func aTokenThatOutlivesItsLifetimeOnTheServersClockIsRefreshedOnce() async throws {
    let server = TestClock()
    var options = Self.requireAuth
    options.tokenLifetime = .seconds(2)
    options.clock = server
    try await withLoopbackApi(routes: .sampleMovies(), options: options) { harness in
      try await harness.client.login()
      _ = try await harness.movies.movie(id: 1)
      server.advance(by: .milliseconds(1999))
      _ = try await harness.movies.movie(id: 2)
      #expect(harness.server.responder.requests(to: "auth") == 1)
      server.advance(by: .milliseconds(1))
      _ = try await harness.movies.movie(id: 3)
      #expect(harness.server.responder.requests(to: "auth") == 2)
      #expect(harness.server.responder.expiredTokensRefused == 1)
    }
  }

  @Test func aRequestThatFailedWithAnOlderTokenIsReplayedWithoutARefresh() async throws {
    // The handler plays the server's part: it refuses the first try, which carried the old token.
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      try await harness.client.login()
      let fresh = harness.context.token
      // The request leaves with a token older than the one a refresh stores meanwhile.
      harness.context.store(token: AuthToken("from-before"))
      let tries = Counter()
      harness.server.handle("GET", "/api/movies/3") { request in
        if tries.increment() == 1 {
          harness.context.store(token: fresh)
          return htmlResponse("{}", status: 401)
        }
        return await harness.server.responder.original(request)
      }
      let fetched = try await harness.movies.movie(id: 3)
      #expect(fetched.id == 3)
      #expect(harness.server.responder.requests(to: "movies/3") == 2)
      #expect(harness.server.responder.requests(to: "auth") == 1)
    }
  }

  @Test func aTokenRefusedRightAfterARefreshFailsInsteadOfLooping() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), options: Self.requireAuth) { harness in
      harness.server.handle("GET", "/api/movies/1") { _ in htmlResponse("{}", status: 401) }
      let error = await apiError { try await harness.movies.movie(id: 1) }
      guard case .authenticationFailed(let route, let reason, _) = error, route == .movie(id: 1)
      else {
        Issue.record("expected authenticationFailed, got \(String(describing: error))")
        return
      }
      #expect(reason.contains("fresh from a refresh"))
      #expect(harness.server.responder.requests(to: "auth") == 1)
    }
  }

  @Test func cancellingWhileWaitingForARefreshEndsIt() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), options: Self.requireAuth) { harness in
      let authReached = Counter()
      let never = TestClock()
      harness.server.handle("GET", "/api/auth") { _ in
        authReached.increment()
        try? await never.sleep(for: .seconds(20))  // an auth server that does not answer
        return htmlResponse("late-token")
      }
      await expectCancellation(
        of: { try await harness.movies.movie(id: 1) }, once: { await authReached.reach(1) })
    }
  }

  @Test func aCancelledRequestNeverStartsARefresh() async throws {
    let server = TestClock()
    try await withLoopbackApi(
      routes: .sampleMovies(),
      options: heldBack(by: server, Self.requireAuth)
    ) { harness in
      let task = Task { try await harness.movies.movie(id: 1) }
      await server.waitForSleepers()
      task.cancel()
      _ = await task.result
      #expect(harness.server.responder.requests(to: "auth") == 0)
    }
  }
}
