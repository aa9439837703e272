import Domain
import Foundation
import HTTPTypes
import Synchronization

/// Runs an `Authenticator` for a client, as Alamofire's `AuthenticationInterceptor` does: the
/// credential is kept per origin in the api context, put on every request to the environment's
/// own origin, and refreshed when needed.
///
/// - **Before sending**, a credential that expires within `margin` (at most half its lifetime)
///   is refreshed first, so no request pays a 401 round trip for an expiry it could see coming.
/// - **After a refusal** (the authenticator's `isAuthenticationFailure`, a 401 by default): a
///   request sent with an older credential than the current one is replayed at once; otherwise
///   one refresh runs however many requests wait for it, and each is replayed with its result.
/// - A request refused again with a credential fresh from a refresh fails instead of refreshing
///   once more; a failed refresh fails every waiting request, and no refresh starts again until
///   the credential changes; at most `maxRefreshes` refreshes start within `window`.
/// - A refusal the authenticator says is not its business is the api's answer: nothing else is
///   sent. So is a refusal of a request that fetches a credential (`Route.isAuthentication`).
/// - The authenticator's own requests go through `AuthenticationContext.client`: transport,
///   adapters, redirect rule and deadline, never an authenticator nor a cached copy's validators.
/// - A cancelled request never starts a refresh, and stops waiting for one at once.
public final class AuthenticationInterceptor: Sendable {
  /// The name the authenticator is registered under (`oauth2`): what a stored credential names.
  public let name: String
  /// What `auth status` calls the credential: `OAuth 2.0 (password grant)`.
  public let kind: String
  /// Headers and query items the credential travels in: redacted in every trace, and the
  /// headers never carried to another origin.
  public let secretHeaders: Set<String>
  /// The query items it travels in.
  public let secretQueryItems: Set<String>
  /// How long before its expiry a credential is refreshed (at most half its lifetime).
  public let margin: Duration
  /// How many refreshes `window` may hold before the next is refused as excessive.
  public let maxRefreshes: Int
  /// The time `maxRefreshes` is counted over.
  public let window: Duration
  /// When each refresh started, on the client's clock: a test moves a test clock past `window`.
  private let stopwatch: Stopwatch
  /// What "expires within the margin" is measured against.
  private let wallClock: WallClock
  private let engine: any CredentialEngine
  private let state = Mutex(State())

  /// Names the authentication's decisions in `Attempt.retriesBy`.
  static let retrierName = "authentication"

  private struct State {
    var flight: [Int: Waiter]?
    var failedFor: Credentialed?
    /// What that failed refresh threw: every request refused for it carries it.
    var refreshFailure: (any Error)?
    var starts: [Duration] = []
    var nextWaiter = 0
  }

  private struct Waiter {
    let route: Route
    let continuation: CheckedContinuation<StoredCredential, any Error>
  }

  /// A credential for an origin: what a refresh replaces.
  private struct Credentialed: Equatable {
    let origin: String
    let credential: StoredCredential?
  }

  /// Runs `authenticator`, registered as `name`: refreshes `margin` before expiry, at most
  /// `maxRefreshes` in `window` on `clock`; credentials issued on `wallClock`.
  public init<A: Authenticator>(
    _ authenticator: A, name: String, margin: Duration = .seconds(60), maxRefreshes: Int = 5,
    window: Duration = .seconds(5), clock: any Clock<Duration> = ContinuousClock(),
    wallClock: WallClock = .system
  ) {
    self.name = name
    kind = authenticator.kind
    secretHeaders = Set(authenticator.secretHeaders.map { $0.lowercased() })
    secretQueryItems = authenticator.secretQueryItems
    self.margin = margin
    self.maxRefreshes = maxRefreshes
    self.window = window
    stopwatch = Stopwatch(clock)
    self.wallClock = wallClock
    engine = Engine(authenticator: authenticator, name: name)
  }

  /// This authentication's credential in `context`: the one kept for the current origin, if
  /// its authenticator issued it and can read it (one it cannot is never sent: as good as none).
  public func credential(in context: any ApiContext) -> StoredCredential? {
    context.credential.flatMap { $0.authenticator == name && engine.isReadable($0) ? $0 : nil }
  }

  /// Whether `context` keeps a credential of this authenticator for the current origin that it
  /// cannot read (another version saved it, or a hand changed it): `auth status` says so.
  public func hasUnreadableCredential(in context: any ApiContext) -> Bool {
    context.credential.map { $0.authenticator == name && !engine.isReadable($0) } ?? false
  }

  /// Whom requests in `context` speak for: the kept credential's identity, else that of the
  /// credential the config holds (HTTP Basic's user). A cache keeps each identity's answers
  /// apart.
  public func identity(in context: any ApiContext) -> String? {
    credential(in: context)?.identity ?? engine.standing(for: context.environment)?.identity
  }

  /// Whether the authenticator has a credential from the config for `environment` (an API
  /// key, a password): one that needs no login and is never kept.
  public func hasStandingCredential(for environment: ApiEnvironment) -> Bool {
    engine.standing(for: environment) != nil
  }

  /// When `credential` expires and when it was issued, as its authenticator reads it.
  public func expiry(of credential: StoredCredential) -> (issuedAt: Date?, expiresAt: Date?) {
    engine.timing(of: credential)
  }

  /// Logs in with what the user gave and keeps the credential for the current origin. An
  /// authenticator whose credential comes from the config (an API key, a password) has nothing
  /// to log in with: that credential is returned and never stored, so a key changed in the
  /// config is the one sent. An `AuthenticationError` it throws is one sentence naming the
  /// environment ("Could not log in to local: …").
  @discardableResult
  public func login(_ login: Login, through client: ApiClient) async throws -> StoredCredential {
    let context = client.context
    if let standing = engine.standing(for: context.environment) { return standing }
    let credential: StoredCredential
    do {
      credential = try await engine.login(
        login,
        in: AuthenticationContext(
          client: client.forAuthentication, environment: context.environment,
          now: wallClock.now()))
    } catch let error as AuthenticationError {
      // The authenticator's reason is a clause; a login's failure is said as a sentence.
      throw error.opened(by: "Could not log in to \(context.environment.name)")
    }
    try context.store(credential: credential)
    return credential
  }

  /// `request` with the current credential, refreshed first when it expires within the margin.
  /// A request to another origin, or one that fetches a credential, is left as it is; so is
  /// every request while there is no credential.
  func authenticate(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    let context = attempt.context
    guard !attempt.route.isAuthentication, context.environment.isOrigin(of: request) else {
      return request
    }
    var authenticated = request
    if var credential = credential(in: context) {
      // A refresh that hands back a credential still about to expire is refreshed again, until
      // the refresh window says it is excessive: such a credential is never sent.
      while expiresSoon(credential) {
        credential = try await refresh(from: credential, for: attempt)
      }
      engine.apply(credential, to: &authenticated)
    } else if let standing = engine.standing(for: context.environment) {
      engine.apply(standing, to: &authenticated)
    } else if engine.unattended {
      // One the authenticator gets on its own: fetched first, never a request sent bare.
      engine.apply(try await refresh(from: nil, for: attempt), to: &authenticated)
    } else {
      return request
    }
    if !attempt.client.monitors.isEmpty {
      let replaced = request.headerFields.filter {
        secretHeaders.contains($0.name.canonicalName)
          && authenticated.headerFields[$0.name] != $0.value
      }
      for field in replaced {
        attempt.client.note(
          "\(attempt.route): the route's own \(field.name.rawName) header was replaced by the"
            + " \(name) credential")
      }
    }
    return authenticated
  }

  /// What to do about `response` to `request`: nil when it is not a refused credential (or not
  /// this authentication's business), else a replay or the error the request fails with.
  func recover(_ request: HTTPRequest, from response: ApiResponse, for attempt: Attempt) async
    -> RetryDecision?
  {
    let context = attempt.context
    guard !attempt.route.isAuthentication, context.environment.isOrigin(of: request),
      engine.isFailure(response, to: request)
    else { return nil }
    if Task.isCancelled { return .fail(CancellationError()) }
    let current = credential(in: context)
    if let current, !engine.isRequest(request, authenticatedWith: current) { return .retry }
    if current == nil, let standing = engine.standing(for: context.environment),
      engine.isRequest(request, authenticatedWith: standing)
    {
      // The configured credential itself was refused: there is nothing to refresh.
      return .fail(
        ApiError.authenticationFailed(
          route: attempt.route,
          reason: "the api refused the \(kind) (HTTP \(response.status))"))
    }
    if (attempt.retriesBy[Self.retrierName] ?? 0) > 0 {
      return .fail(
        ApiError.authenticationFailed(
          route: attempt.route,
          reason: "the server refused the \(name) credential fresh from a"
            + " refresh too"))
    }
    do {
      _ = try await refresh(from: current, for: attempt)
      return .retry
    } catch {
      return .fail(error)
    }
  }

  /// Whether `credential` expires within the margin: `margin`, or half its lifetime when that
  /// is shorter.
  private func expiresSoon(_ credential: StoredCredential) -> Bool {
    let (issuedAt, expiresAt) = engine.timing(of: credential)
    guard let expiresAt else { return false }
    var seconds = Double(margin.components.seconds)
    if let issuedAt { seconds = min(seconds, expiresAt.timeIntervalSince(issuedAt) / 2) }
    return wallClock.now().addingTimeInterval(seconds) >= expiresAt
  }

  /// Waits for the refresh under way, or starts one, unless one failed for this credential:
  /// the credential the request goes on with.
  private func refresh(from credential: StoredCredential?, for attempt: Attempt) async throws
    -> StoredCredential
  {
    let looked = Credentialed(
      origin: attempt.context.environment.origin.description, credential: credential)
    let id = state.withLock { state -> Int in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<StoredCredential, any Error>) in
        let waiter = Waiter(route: attempt.route, continuation: continuation)
        switch enqueue(waiter, id: id, looked: looked, context: attempt.context) {
        case .failed(let error): continuation.resume(throwing: error)
        case .refreshed(let credential): continuation.resume(returning: credential)
        case .joined: break
        case .started:
          Task { await self.perform(from: credential, for: attempt) }
        }
        // Cancelled before the waiter was queued: the cancellation handler found nothing to end.
        if Task.isCancelled { leave(id) }
      }
    } onCancel: {
      leave(id)
    }
  }

  private enum Enqueued {
    case started, joined
    /// A refresh ended between the request's look at the credential and now: go on with it.
    case refreshed(StoredCredential)
    case failed(ApiError)
  }

  private func enqueue(
    _ waiter: Waiter, id: Int, looked: Credentialed, context: any ApiContext
  ) -> Enqueued {
    state.withLock { state in
      // Checked under the lock that ends a flight, after the new credential is stored: a
      // request that saw the old one just before a refresh ended does not start a second one.
      if state.flight == nil, let now = credential(in: context), now != looked.credential {
        return .refreshed(now)
      }
      if state.failedFor == looked {
        return .failed(
          .authenticationFailed(
            route: waiter.route, reason: "the last \(name) credential refresh failed; log in again",
            underlying: state.refreshFailure))
      }
      if state.flight != nil {
        state.flight?[id] = waiter
        return .joined
      }
      let now = stopwatch.elapsed
      state.starts.removeAll { now - $0 > window }
      guard state.starts.count < maxRefreshes else {
        return .failed(
          .excessiveRefresh(
            route: waiter.route, count: maxRefreshes, seconds: Int(window.components.seconds)))
      }
      state.starts.append(now)
      state.flight = [id: waiter]
      return .started
    }
  }

  /// Ends the wait of a cancelled request; the refresh itself goes on.
  private func leave(_ id: Int) {
    let waiter = state.withLock { $0.flight?.removeValue(forKey: id) }
    waiter?.continuation.resume(throwing: CancellationError())
  }

  private func perform(from credential: StoredCredential?, for attempt: Attempt) async {
    let context = attempt.context
    let looked = Credentialed(
      origin: context.environment.origin.description, credential: credential)
    let result: Result<StoredCredential, any Error>
    do {
      let engine = engine
      let authentication = AuthenticationContext(
        client: attempt.client.forAuthentication, environment: context.environment,
        now: wallClock.now())
      switch try await context.refreshCredential(
        replacing: credential, with: { try await engine.refresh($0, in: authentication) })
      {
      case .refreshed(let fresh), .changed(let fresh?): result = .success(fresh)
      case .changed(nil):
        result = .failure(
          AuthenticationError.loginRequired(
            "the credential was dropped (logged out) while this request waited; log in again"))
      }
    } catch {
      result = .failure(error)
    }
    let waiters = state.withLock { state -> [Waiter] in
      let waiters = state.flight.map { Array($0.values) } ?? []
      state.flight = nil
      // A refresh that could not reach the token endpoint proves nothing about the credential:
      // the next request may try again.
      if case .failure(let error) = result, !Self.isUnreachable(error) {
        state.failedFor = looked
        state.refreshFailure = error
      } else {
        state.failedFor = nil
        state.refreshFailure = nil
      }
      return waiters
    }
    for waiter in waiters {
      switch result {
      case .success(let credential): waiter.continuation.resume(returning: credential)
      case .failure(let error):
        waiter.continuation.resume(throwing: Self.failure(error, route: waiter.route, name: name))
      }
    }
  }

  /// Whether a refresh failed for want of the token endpoint (no connection, a timeout, a
  /// 5xx): the api being unreachable, not a refused credential, so a layered stack answers from
  /// what it keeps and a write is kept in the outbox.
  static func isUnreachable(_ error: any Error) -> Bool {
    guard let failure = ServiceFailure.of(error) else { return false }
    return failure == .unreachable || failure == .unavailable
  }

  /// The error a request fails with when the refresh it waited for failed.
  private static func failure(_ error: any Error, route: Route, name: String) -> any Error {
    if isUnreachable(error) { return error }
    return switch error {
    case let error as AuthenticationError:
      switch error {
      case .loginRequired(let reason):
        ApiError.authenticationFailed(route: route, reason: reason, underlying: error)
      case .revoked(let reason):
        ApiError.authenticationFailed(
          route: route, reason: "\(reason); the credential was dropped: log in again",
          underlying: error)
      case .invalidAnswer(let reason):
        ApiError.authenticationFailed(
          route: route, reason: "the \(name) refresh failed: \(clause(reason))",
          underlying: error)
      }
    case is CancellationError: error
    default:
      ApiError.authenticationFailed(
        route: route, reason: "the \(name) refresh failed: \(clause(error))", underlying: error)
    }
  }
}
