import Foundation
import HTTPTypes

/// Retries idempotent requests (never POST or PATCH) that failed in a way that may pass:
/// 408, 429, 500, 502, 503, 504, a timeout, a refused or lost connection. It waits with
/// exponential backoff and jitter, or as long as `Retry-After` asks, up to `retryAfterCap`; a
/// longer `Retry-After` fails the request at once rather than leave it hanging.
///
/// It decides how long to wait; `ApiClient` does the waiting on its clock. The jitter comes from
/// `random` and an HTTP-date `Retry-After` is read against `now`, so a test can assert the exact
/// delay asked for.
public struct BackoffRetrier: RequestRetrier {
  /// The knobs, with their defaults.
  public struct Policy: Sendable {
    /// Retries after the first try.
    public var maxRetries = 2
    /// The first wait; each retry doubles it.
    public var baseDelay: Duration = .milliseconds(200)
    /// The longest wait.
    public var maxDelay: Duration = .seconds(10)
    /// Each wait is multiplied by a random factor in this range.
    public var jitter: ClosedRange<Double> = 0.5...1.5
    /// The longest `Retry-After` honoured.
    public var retryAfterCap: Duration = .seconds(30)
    /// The statuses retried.
    public var statuses: Set<Int> = [408, 429, 500, 502, 503, 504]

    /// The defaults.
    public init() {}
  }

  /// Its knobs.
  public let policy: Policy
  /// Draws the jitter factor.
  public let random: RandomSource
  /// The wall clock an HTTP-date `Retry-After` is measured from.
  public let now: @Sendable () -> Date
  public var name: String { "backoff" }

  /// A retrier of `policy`, its jitter from `random`, an HTTP-date `Retry-After` read against
  /// `now`.
  public init(
    policy: Policy = Policy(), random: RandomSource = .system,
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.policy = policy
    self.random = random
    self.now = now
  }

  /// Retries an idempotent request after a connection failure, a timeout or a status in `statuses`,
  /// waiting out `Retry-After` or a jittered doubling delay.
  public func retry(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome)
    async
    -> RetryDecision
  {
    guard attempt.route.isIdempotent else { return .doNotRetry }
    let done = attempt.retriesBy[name] ?? 0
    switch outcome {
    case .response(let response):
      guard policy.statuses.contains(response.status) else { return .doNotRetry }
      if let asked = response.retryAfter(now: now()) {
        guard asked <= policy.retryAfterCap else {
          return .fail(
            ApiError.retryAfterTooLong(
              route: attempt.route, seconds: Int(asked.components.seconds),
              cap: Int(policy.retryAfterCap.components.seconds)))
        }
        return done < policy.maxRetries ? .retryAfter(asked) : .doNotRetry
      }
    case .failure(let error):
      guard error.isTransient else { return .doNotRetry }
    }
    return done < policy.maxRetries ? .retryAfter(delay(afterRetries: done)) : .doNotRetry
  }

  /// `baseDelay · 2^retries`, capped, times a random factor from `jitter`.
  func delay(afterRetries retries: Int) -> Duration {
    let exponential = policy.baseDelay * (1 << min(retries, 20))
    let capped = min(exponential, policy.maxDelay)
    return capped * random.next(in: policy.jitter)
  }

  /// A `Retry-After` value (RFC 9110, 10.2.3) as the wait it asks for: seconds (`120`) or an
  /// HTTP date (`Wed, 25 Nov 2026 19:00:00 GMT`, as seen at `now`; a past one is no wait); nil
  /// when it is neither. See also `ApiResponse.retryAfter(now:)`.
  public static func retryAfter(_ value: String, now: Date) -> Duration? {
    let text = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Int(text), seconds >= 0 { return .seconds(seconds) }
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
    guard let date = formatter.date(from: text) else { return nil }
    let seconds = date.timeIntervalSince(now).rounded(.up)
    // A hostile header can name a year so far off that the seconds overflow Int (a trap);
    // any wait that long is past every cap, so it is capped here before converting.
    return seconds < 1e9 ? .seconds(max(0, Int(seconds))) : .seconds(1_000_000_000)
  }
}

extension RequestRetrier where Self == BackoffRetrier {
  /// Exponential backoff with jitter for idempotent requests, two retries.
  public static var backoff: Self { BackoffRetrier() }

  /// Backoff with other knobs, and the random source its jitter comes from.
  public static func backoff(_ policy: BackoffRetrier.Policy, random: RandomSource = .system)
    -> Self
  {
    BackoffRetrier(policy: policy, random: random)
  }
}

/// Where jitter comes from: the system generator in an app, a fixed or scripted value in a test,
/// so a test can assert the exact delay a retrier asked for. Registered in the container like
/// any other part (the composition gives every retrier the same one).
public struct RandomSource: Sendable {
  private let draw: @Sendable (ClosedRange<Double>) -> Double

  /// A source that answers `draw(range)`; the answer is clamped into the range.
  public init(_ draw: @escaping @Sendable (ClosedRange<Double>) -> Double) { self.draw = draw }

  /// A value from `range`.
  public func next(in range: ClosedRange<Double>) -> Double {
    min(max(draw(range), range.lowerBound), range.upperBound)
  }

  /// The system's generator.
  public static var system: RandomSource { RandomSource { Double.random(in: $0) } }

  /// Always the same point of the range: 0 is its lower bound, 1 its upper bound.
  public static func fixed(_ fraction: Double) -> RandomSource {
    RandomSource { $0.lowerBound + ($0.upperBound - $0.lowerBound) * fraction }
  }
}
