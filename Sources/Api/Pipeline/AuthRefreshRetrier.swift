import Domain
import Foundation
import HTTPTypes
import Synchronization

/// The talk's `ApiRequestRetrier`, done right under concurrency: on a 401 for any route but
/// `auth`, it gets a new token through the client's `auth` route and replays the request.
///
/// - However many requests fail at once, one refresh runs; the others wait for it.
/// - A request that failed with an older token than the current one is replayed at once.
/// - A failed refresh fails every waiting request with `authenticationFailed`, and no refresh
///   starts again until the credentials (environment or token) change: no retry loop.
/// - A request that is refused again with a token fresh from a refresh fails instead of
///   refreshing once more.
/// - At most `maxRefreshes` refreshes start within `window`; the next fails with
///   `excessiveRefresh`.
/// - A cancelled request never starts a refresh, and stops waiting for one at once; the
///   refresh goes on for the others.
///
/// The window is measured on `clock`, so a test moves a test clock past it.
public final class AuthRefreshRetrier: RequestRetrier {
  public let maxRefreshes: Int
  public let window: Duration
  /// Time since this retrier was made, on its clock: when each refresh started.
  private let stopwatch: Stopwatch
  public var name: String { "authRefresh" }

  private let state = Mutex(State())

  private struct State {
    var flight: [Int: Waiter]?
    var failedFor: Credential?
    var starts: [Duration] = []
    var nextWaiter = 0
    var refreshes = 0
  }

  private struct Waiter {
    let route: Route
    let continuation: CheckedContinuation<Void, any Error>
  }

  /// The token a request carried, in an environment: what a refresh is for.
  private struct Credential: Equatable {
    let environment: String
    let token: AuthToken?
  }

  public init(
    maxRefreshes: Int = 5, window: Duration = .seconds(5),
    clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.maxRefreshes = maxRefreshes
    self.window = window
    self.stopwatch = Stopwatch(clock)
  }

  /// How many refreshes this retrier started, for tests and logs.
  public var refreshCount: Int { state.withLock { $0.refreshes } }

  public func retry(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome)
    async
    -> RetryDecision
  {
    guard outcome.status == 401, !attempt.route.isAuthentication else { return .doNotRetry }
    if Task.isCancelled { return .fail(CancellationError()) }
    let environment = attempt.context.environment
    let sent = AuthTokenAdapter.token(in: request, for: environment)
    let current = attempt.context.token
    if let current, current != sent { return .retry }
    if (attempt.retriesBy[name] ?? 0) > 0 {
      return .fail(
        ApiError.authenticationFailed(
          route: attempt.route, reason: "the server refused the refreshed token too"))
    }
    do {
      try await refresh(Credential(environment: environment.name, token: current), for: attempt)
      return .retry
    } catch {
      return .fail(error)
    }
  }

  /// Waits for the refresh under way, or starts one, unless it failed for these credentials.
  private func refresh(_ credential: Credential, for attempt: Attempt) async throws {
    let id = state.withLock { state -> Int in
      state.nextWaiter += 1
      return state.nextWaiter
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let waiter = Waiter(route: attempt.route, continuation: continuation)
        switch enqueue(waiter, id: id, credential: credential, context: attempt.context) {
        case .failed(let error): continuation.resume(throwing: error)
        case .refreshed: continuation.resume()
        case .joined: break
        case .started:
          Task { await self.perform(credential, through: attempt.client, route: attempt.route) }
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
    /// A refresh ended between the request's look at the token and now: retry with the new one.
    case refreshed
    case failed(ApiError)
  }

  private func enqueue(
    _ waiter: Waiter, id: Int, credential: Credential, context: any ApiContext
  ) -> Enqueued {
    state.withLock { state in
      // Checked under the lock that ends a flight, after the new token is stored: a request
      // that saw the old token just before a refresh ended does not start a second one.
      if state.flight == nil, context.token != credential.token {
        return .refreshed
      }
      if state.failedFor == credential {
        return .failed(
          .authenticationFailed(
            route: waiter.route, reason: "the last token refresh failed; log in again"))
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
      state.refreshes += 1
      state.flight = [id: waiter]
      return .started
    }
  }

  /// Ends the wait of a cancelled request; the refresh itself goes on.
  private func leave(_ id: Int) {
    let waiter = state.withLock { $0.flight?.removeValue(forKey: id) }
    waiter?.continuation.resume(throwing: CancellationError())
  }

  private func perform(_ credential: Credential, through client: ApiClient, route: Route) async {
    var failure: String?
    do {
      try await ApiAuthService(client: client).authorize()
    } catch {
      failure = "the token refresh failed: \(error)"
    }
    let waiters = state.withLock { state -> [Waiter] in
      let waiters = state.flight.map { Array($0.values) } ?? []
      state.flight = nil
      state.failedFor = failure == nil ? nil : credential
      return waiters
    }
    for waiter in waiters {
      if let failure {
        waiter.continuation.resume(
          throwing: ApiError.authenticationFailed(route: waiter.route, reason: failure))
      } else {
        waiter.continuation.resume()
      }
    }
  }
}

extension RequestRetrier where Self == AuthRefreshRetrier {
  /// One token refresh for any number of 401s at once; at most 5 in 5 seconds (tokens that live
  /// two seconds still refresh; a server that rejects every new token at once is caught).
  public static var authRefresh: Self { AuthRefreshRetrier() }

  /// The same, with its refresh window measured on `clock`.
  public static func authRefresh(clock: any Clock<Duration>) -> Self {
    AuthRefreshRetrier(clock: clock)
  }
}
