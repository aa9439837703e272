import Foundation
import HTTPTypes

/// What a retrier decided about a failed try.
public enum RetryDecision: Sendable {
  /// Send again now.
  case retry
  /// Send again after waiting this long.
  case retryAfter(Duration)
  /// Not this retrier's business: ask the next one.
  case doNotRetry
  /// Stop, failing the request with this error instead of the try's.
  case fail(any Error)
}

/// Decides whether a failed try is sent again. Retriers run in order until one decides
/// something other than `doNotRetry`; when none does, the request fails with the try's error.
public protocol RequestRetrier: Sendable {
  /// Names the retrier in `Attempt.retriesBy`.
  var name: String { get }
  /// Whether, and after how long, `request` is sent again after `outcome`.
  func retry(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome) async
    -> RetryDecision
}

/// Several retriers run as one: the first that decides wins.
struct CompositeRetrier: RequestRetrier {
  /// The retriers, in order.
  let retriers: [any RequestRetrier]

  /// `retriers` as one, asked in order.
  init(_ retriers: [any RequestRetrier]) { self.retriers = retriers }

  var name: String { retriers.map(\.name).joined(separator: "+") }

  /// The first decision other than `doNotRetry`, or `doNotRetry`.
  func retry(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome)
    async
    -> RetryDecision
  {
    await decide(request, for: attempt, after: outcome).decision
  }

  /// The first decision that is not `doNotRetry`, with the retrier that made it.
  func decide(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome) async
    -> (decision: RetryDecision, by: String)
  {
    for retrier in retriers {
      let decision = await retrier.retry(request, for: attempt, after: outcome)
      if case .doNotRetry = decision { continue }
      return (decision, retrier.name)
    }
    return (.doNotRetry, "")
  }
}

/// One try at sending a route: what adapters and retriers know about the request in hand.
public struct Attempt: Sendable {
  /// The route being sent.
  public let route: Route
  /// The client sending it: its context holds the environment and token, and a retrier may
  /// send through it.
  public let client: ApiClient
  /// 1 for the first try, 2 for the first retry, and so on.
  public let number: Int
  /// How many retries each retrier decided so far, by its `name`.
  public let retriesBy: [String: Int]

  /// The client's context.
  public var context: any ApiContext { client.context }

  init(route: Route, client: ApiClient) {
    self.init(route: route, client: client, number: 1, retriesBy: [:])
  }

  private init(route: Route, client: ApiClient, number: Int, retriesBy: [String: Int]) {
    self.route = route
    self.client = client
    self.number = number
    self.retriesBy = retriesBy
  }

  /// The next try, after a retry `retrier` decided.
  func next(decidedBy retrier: String) -> Attempt {
    var counts = retriesBy
    counts[retrier, default: 0] += 1
    return Attempt(route: route, client: client, number: number + 1, retriesBy: counts)
  }
}

/// How a try ended, when it did not succeed.
public enum AttemptOutcome: Sendable {
  /// The server answered with a status outside 2xx.
  case response(ApiResponse)
  /// The transport failed (no connection, timeout, refused redirect).
  case failure(TransportError)

  /// The answer's status; nil for a transport failure.
  public var status: Int? {
    if case .response(let response) = self { return response.status }
    return nil
  }
}
