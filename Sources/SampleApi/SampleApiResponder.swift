import Api
import Domain
import Foundation
import HTTPTypes
import Synchronization

/// An app's sample api as a function from request to response: its `FixtureRoutes` (a folder
/// of JSON files, or routes an app writes), with the token routes and the faults tests and
/// demos need. The fixture server serves it over loopback HTTP; an in-process transport can
/// call it directly (`InProcessTransport.sample`), so an app's `sample` environment needs no
/// network.
///
/// Besides the routes, under `Options.basePath`: `GET auth` (a token as plain text, unless a
/// route answers it) and, with `Options.oauth`, `POST oauth/token`.
public final class SampleApiResponder: Sendable {
  /// Behaviour and faults. Every fault is off by default.
  public struct Options: Sendable {
    /// The path the routes live under, with leading and trailing slashes.
    public var basePath = "/api/"
    /// Added before every answer.
    public var latency: Duration = .zero
    /// The first this many requests to each path answer 503: deterministic faults for tests.
    public var failFirst = 0
    /// Each request answers 503 with this probability, drawn from a generator seeded by `seed`.
    public var failureRate = 0.0
    /// The seed of the generator `failureRate` draws from: the same seed, the same faults.
    public var seed: UInt64 = 2017
    /// The `Retry-After` header sent with injected 503s, in seconds; none when nil.
    public var retryAfter: Int?
    /// Every route but the token routes answers 401 until a request carries a token `auth`
    /// handed out.
    public var requireAuth = false
    /// An OAuth 2.0 token endpoint at `<basePath>oauth/token`, when set: its access tokens are
    /// accepted as `Authorization: Bearer …` wherever auth is required.
    public var oauth: OAuthServer?
    /// How long a token stays valid; forever when nil.
    public var tokenLifetime: Duration?
    /// The header a token travels in, and its scheme (`Authorization: Bearer …`).
    public var tokenHeader = AuthToken.defaultHeader
    /// The token's scheme (`Bearer`); nil for a bare token.
    public var tokenScheme: String? = AuthToken.defaultScheme
    /// Latency is waited, and token lifetimes measured, on this clock: a test clock lets a test
    /// hold an answer back, or expire a token, without waiting.
    public var clock: any Clock<Duration> = ContinuousClock()

    /// No latency, no faults, no auth required.
    public init() {}
  }

  /// How it answers: latency, faults, auth.
  public let options: Options
  private let state: Mutex<State>
  private let routes: Mutex<FixtureRoutes>
  /// The routes the responder was made with, before any `handle`.
  private let initialRoutes: FixtureRoutes
  /// Time since the responder was made, on its clock: when each token expires.
  private let stopwatch: Stopwatch

  private struct State {
    var counts: [String: Int] = [:]
    var tokens: [String: Duration?] = [:]
    var issued = 0
    var random: UInt64
    var authCalls = 0
    var inFlight = 0
    var peakInFlight = 0
    var expiredRefused: Set<String> = []
    var refreshTokens: Set<String> = []
    var grants: [String: Int] = [:]
  }

  /// Serves `routes` (under `options.basePath`, as they were made).
  public init(options: Options = Options(), routes: FixtureRoutes) {
    self.options = options
    initialRoutes = routes
    self.routes = Mutex(initialRoutes)
    state = Mutex(State(random: options.seed | 1))
    stopwatch = Stopwatch(options.clock)
  }

  // MARK: Counters, for tests

  /// How many requests reached `path` (relative to the base path, e.g. `books/1`, `auth`).
  public func requests(to path: String) -> Int { state.withLock { $0.counts[path] ?? 0 } }

  /// How many requests arrived in all.
  public var totalRequests: Int { state.withLock { $0.counts.values.reduce(0, +) } }

  /// The most requests that were being answered at once.
  public var peakConcurrency: Int { state.withLock { $0.peakInFlight } }

  /// How many tokens `auth` handed out.
  public var tokensIssued: Int { state.withLock { $0.issued } }

  /// How many distinct tokens were refused because they had expired.
  public var expiredTokensRefused: Int { state.withLock { $0.expiredRefused.count } }

  /// Makes every token handed out so far invalid, as if each had expired.
  public func expireTokens() { state.withLock { $0.tokens.removeAll() } }

  /// How many OAuth token requests of `grantType` (`password`, `refresh_token`,
  /// `client_credentials`) were answered with a token.
  public func grants(_ grantType: String) -> Int { state.withLock { $0.grants[grantType] ?? 0 } }

  /// Makes every OAuth refresh token handed out so far invalid: the next refresh is answered
  /// `invalid_grant`.
  public func revokeRefreshTokens() { state.withLock { $0.refreshTokens.removeAll() } }

  // MARK: Answering

  /// Answers `method pattern` with `answer` from now on (see `FixtureRoutes`); latency, faults
  /// and required auth still apply.
  public func handle(
    _ method: String, _ pattern: String, with answer: @escaping FixtureRoutes.Answer
  ) {
    routes.withLock { $0.add(method, pattern, answer) }
  }

  /// The patterns served, as `GET /api/books/{id}`; the token route is `GET <basePath>auth`.
  public var patterns: [String] { routes.withLock { $0.patterns } }

  /// Every request passes here, whichever route it is for: counted, delayed by the latency,
  /// failed by `failFirst` or `failureRate`, refused without a valid token when auth is
  /// required (but for the token route), then answered by its route, or 404 naming it.
  public func respond(to request: SampleRequest) async -> SampleResponse {
    let route =
      request.path.hasPrefix(options.basePath)
      ? String(request.path.dropFirst(options.basePath.count)) : nil
    let (count, injectedFailure) = state.withLock { state -> (Int, Bool) in
      let key = route ?? request.path
      state.counts[key, default: 0] += 1
      state.inFlight += 1
      state.peakInFlight = max(state.peakInFlight, state.inFlight)
      return (state.counts[key] ?? 0, Self.draw(&state.random) < options.failureRate)
    }
    defer { state.withLock { $0.inFlight -= 1 } }
    if options.latency > .zero {
      do { try await options.clock.sleep(for: options.latency) } catch {
        return .error(503, "request cancelled")
      }
    }
    if count <= options.failFirst || injectedFailure {
      let headers = options.retryAfter.map { ["Retry-After": String($0)] } ?? [:]
      return .error(503, "the fixture server is failing this request on purpose", headers: headers)
    }
    let isTokenRoute = route == "auth" || (options.oauth != nil && route == OAuthServer.path)
    if options.requireAuth && !isTokenRoute && !isAuthorized(request) {
      return .error(
        401, "a valid token is required: call auth first",
        headers: ["WWW-Authenticate": #"Bearer realm="sample""#])
    }
    return await answer(request, from: routes.withLock { $0 })
  }

  /// The answer of the routes the responder was made with (and the token route), as if nothing
  /// had been `handle`d, without counting, latency or faults: for a handler that changes one
  /// answer and passes the rest on.
  public func original(_ request: SampleRequest) async -> SampleResponse {
    await answer(request, from: initialRoutes)
  }

  private func answer(_ request: SampleRequest, from routes: FixtureRoutes) async
    -> SampleResponse
  {
    let isTokenRoute = request.method == "GET" && request.path == options.basePath + "auth"
    let isOAuthRoute =
      options.oauth != nil && request.method == "POST"
      && request.path == options.basePath + OAuthServer.path
    switch routes.match(request.method, request.path, query: request.query) {
    case .found(let answer, let parameters):
      var bound = request
      bound.parameters = parameters
      return await answer(bound)
    case _ where isOAuthRoute:
      return issueOAuthToken(request, options.oauth ?? OAuthServer())
    case .wrongMethod where isTokenRoute, .none where isTokenRoute:
      return issueToken()
    case .wrongMethod(let allowed):
      let methods = allowed.joined(separator: ", ")
      return .error(
        405, "\(request.method) is not allowed on \(request.path); it answers \(methods)")
    case .none:
      return .error(404, "no route answers \(request.method) \(request.path)")
    }
  }

  private func issueToken() -> SampleResponse {
    let token = state.withLock { state -> String in
      state.issued += 1
      // Unpredictable, unlike the seeded fault draws: two servers never hand out the same token.
      let token = "sample-\(state.issued)-\(String(UInt64.random(in: 1 ... .max), radix: 16))"
      // updateValue, not subscript assignment: a nil expiry (never expires) must be stored.
      state.tokens.updateValue(
        options.tokenLifetime.map { stopwatch.elapsed + $0 }, forKey: token)
      return token
    }
    return .staticFile(Data(token.utf8))
  }

  /// The token endpoint's answer (RFC 6749 4.3, 4.4, 6; errors as 5.2).
  private func issueOAuthToken(_ request: SampleRequest, _ oauth: OAuthServer) -> SampleResponse {
    let form = OAuthServer.form(request.body)
    let (clientId, clientSecret) = OAuthServer.client(request, form: form)
    guard clientId == oauth.clientId,
      oauth.clientSecret == nil || clientSecret == oauth.clientSecret
    else { return OAuthServer.error(401, "invalid_client", "unknown client or wrong secret") }
    let grant = form["grant_type"] ?? ""
    return state.withLock { state -> SampleResponse in
      var refreshToken: String?
      switch grant {
      case "password":
        guard let user = form["username"], let password = form["password"],
          oauth.users[user] == password
        else { return OAuthServer.error(400, "invalid_grant", "wrong user name or password") }
        refreshToken = Self.newToken("refresh", &state)
      case "client_credentials":
        guard oauth.allowsClientCredentials else {
          return OAuthServer.error(400, "unauthorized_client", "client credentials not allowed")
        }
      case "refresh_token":
        guard let presented = form["refresh_token"], state.refreshTokens.contains(presented) else {
          return OAuthServer.error(400, "invalid_grant", "the refresh token is not valid")
        }
        if oauth.rotatesRefreshTokens {
          state.refreshTokens.remove(presented)
          refreshToken = Self.newToken("refresh", &state)
        }
      default:
        return OAuthServer.error(400, "unsupported_grant_type", "grant_type \(grant) is not served")
      }
      if let refreshToken { state.refreshTokens.insert(refreshToken) }
      let access = Self.newToken("access", &state)
      state.tokens.updateValue(stopwatch.elapsed + oauth.accessTokenLifetime, forKey: access)
      state.grants[grant, default: 0] += 1
      var answer: [String: Any] = [
        "access_token": access, "token_type": "bearer",
        "expires_in": Int(oauth.accessTokenLifetime.components.seconds),
      ]
      if let refreshToken { answer["refresh_token"] = refreshToken }
      let body = try? JSONSerialization.data(withJSONObject: answer, options: [.sortedKeys])
      return SampleResponse(
        status: 200,
        headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
        body: body ?? Data())
    }
  }

  /// A token no other server hands out: `kind-N-<random hex>`.
  private static func newToken(_ kind: String, _ state: inout State) -> String {
    state.issued += 1
    return "\(kind)-\(state.issued)-\(String(UInt64.random(in: 1 ... .max), radix: 16))"
  }

  private func isAuthorized(_ request: SampleRequest) -> Bool {
    guard var value = request.headers[options.tokenHeader.lowercased()] else { return false }
    if let scheme = options.tokenScheme {
      guard value.hasPrefix(scheme + " ") else { return false }
      value = String(value.dropFirst(scheme.count + 1))
    }
    return state.withLock { state in
      guard let entry = state.tokens[value] else { return false }
      guard let expiry = entry else { return true }
      if stopwatch.elapsed < expiry { return true }
      state.expiredRefused.insert(value)
      return false
    }
  }

  /// xorshift64*: a small deterministic generator, so a seeded failure rate repeats exactly.
  private static func next(_ state: inout UInt64) -> UInt64 {
    state ^= state >> 12
    state ^= state << 25
    state ^= state >> 27
    return state &* 0x2545_F491_4F6C_DD1D
  }

  private static func draw(_ state: inout UInt64) -> Double {
    Double(next(&state) >> 11) / Double(1 << 53)
  }
}

extension InProcessTransport {
  /// An app's sample api answering in process (a `sample` environment's transport): no
  /// network and no other process.
  public static func sample(_ responder: SampleApiResponder) -> InProcessTransport {
    InProcessTransport { request, body in
      var headers: [String: String] = [:]
      for field in request.headerFields { headers[field.name.canonicalName] = field.value }
      let sample = SampleRequest(
        method: request.method.rawValue, path: request.path ?? "/", headers: headers,
        body: body ?? Data())
      let response = await responder.respond(to: sample)
      return ApiResponse(
        status: response.status, headers: response.headers,
        body: response.generated?.whole ?? response.body)
    }
  }
}
