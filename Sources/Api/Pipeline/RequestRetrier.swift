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
