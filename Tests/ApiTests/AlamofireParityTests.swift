import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

@testable import Api

/// Behaviours Alamofire's own tests check, over real loopback HTTP: an authenticator's own
/// error reaches the caller as itself, a refresh that keeps handing back an expired credential
/// ends in `excessiveRefresh`, and `acceptableContentTypes` compares media types as HTTP does.
@Suite(.timeLimit(.minutes(1))) struct AlamofireParityTests {
  struct RefreshRefused: Error, Equatable { let code: Int }

  /// An app's authenticator: its refresh throws its own error, or hands back `next`.
  struct OwnAuthenticator: Authenticator {
    struct Credential: AuthenticationCredential {
      let token: String
      let expiresAt: Date?
    }
    let refreshes: Counter
    let next: @Sendable () throws -> Credential
    var kind: String { "own token" }
    func apply(_ credential: Credential, to request: inout HTTPRequest) {
      request.headerFields[.authorization] = "Bearer \(credential.token)"
    }
    func refresh(_ current: Credential?, in context: AuthenticationContext) async throws
      -> Credential
    {
      _ = refreshes.increment()
      return try next()
    }
  }

  private static func withOwn(
    next: @escaping @Sendable () throws -> OwnAuthenticator.Credential,
    _ body: (LoopbackApi, Counter) async throws -> Void
  ) async throws {
    let refreshes = Counter()
    let wall = TestWallClock()
    let authentication = AuthenticationInterceptor(
      OwnAuthenticator(refreshes: refreshes, next: next), name: "own", clock: TestClock(),
      wallClock: wall.wallClock)
    try await withLoopbackApi(routes: .sampleMovies(), authentication: authentication) { api in
      try api.context.store(
        credential: StoredCredential(
          "own",
          OwnAuthenticator.Credential(token: "old", expiresAt: wall.now.addingTimeInterval(-1))))
      try await body(api, refreshes)
    }
  }

  @Test func anAuthenticatorsOwnErrorIsCaughtAsItself() async throws {
    let refused: @Sendable () throws -> OwnAuthenticator.Credential = {
      throw RefreshRefused(code: 7)
    }
    try await Self.withOwn(next: refused) { api, refreshes in
      do {
        _ = try await api.movies.movie(id: 1)
        Issue.record("expected a failure")
      } catch let error as ApiError {
        #expect(error.underlyingError as? RefreshRefused == RefreshRefused(code: 7))
        #expect(error.failure == .authentication)
      }
      #expect(refreshes.value == 1)
      // A request after that failed refresh is refused without a second refresh, carrying the
      // same error as the ones that waited for it.
      let after = await apiError { try await api.movies.movie(id: 2) }
      #expect("\(String(describing: after))".contains("refresh failed; log in again"))
      #expect(after?.underlyingError as? RefreshRefused == RefreshRefused(code: 7))
      #expect(refreshes.value == 1)
    }
  }

  @Test func aRefreshThatKeepsHandingBackAnExpiredCredentialIsExcessive() async throws {
    let expired = OwnAuthenticator.Credential(
      token: "stale", expiresAt: Date(timeIntervalSince1970: 0))
    let stale: @Sendable () throws -> OwnAuthenticator.Credential = { expired }
    try await Self.withOwn(next: stale) { api, refreshes in
      let error = await apiError { try await api.movies.movie(id: 1) }
      guard case .excessiveRefresh? = error else {
        Issue.record("expected excessiveRefresh, got \(String(describing: error))")
        return
      }
      #expect(refreshes.value == 5)
      #expect(api.responder.requests(to: "movies/1") == 0)  // an expired credential is never sent
    }
  }

  @Test(arguments: [
    ("application/json; charset=utf-8", ["application/json"], true),
    ("application/json", ["application/json; charset=utf-8"], true),
    ("application/vnd.api+json", ["*/vnd.api+json"], true),
    ("text/json", ["*/json"], true),
    ("text/html", ["*/json"], false),
    ("APPLICATION/JSON", ["application/*"], true),
    ("", ["application/json"], false),
  ])
  func mediaTypesAreComparedAsHTTPDoes(contentType: String, accepted: [String], accepts: Bool) {
    var route = Route(.get, "movies/1")
    route.acceptableContentTypes = accepted
    #expect(route.accepts(contentType: contentType) == accepts)
  }

  @Test func anEmptyAnswerHasNoTypeToCheckAndARefusalNamesTheTypesSorted() async throws {
    try await withLoopbackApi(routes: .sampleMovies()) { api in
      api.server.handle("DELETE", "/api/movies/{id}") { _ in SampleResponse(status: 204) }
      api.server.handle("GET", "/api/movies/{id}") { _ in
        SampleResponse(status: 200, headers: [:], body: Data("{}".utf8))
      }
      var delete = Route(.delete, "movies/1")
      delete.acceptableContentTypes = ["application/json"]
      let deleted = try await api.client.response(for: delete)
      #expect(deleted.status == 204)
      var get = Route(.get, "movies/1")
      get.acceptableContentTypes = ["text/plain", "application/json"]
      let error = await apiError { try await api.client.response(for: get) }
      #expect(
        error?.description
          == "GET movies/1 answered no Content-Type, not application/json or text/plain as it accepts."
      )
    }
  }
}
