import Domain
import Foundation
import HTTPTypes

/// What a client tells its monitors: each try as it ends, with its trace line (the one line
/// builder, `RequestTrace`) and the transport's metrics, and notes about a call.
extension ApiClient {
  /// Tells every monitor that the try `attempt` of `route` ended with `outcome`.
  func ended(
    _ request: HTTPRequest, _ route: Route, _ attempt: Attempt, _ hops: Int,
    _ outcome: AttemptOutcome, since started: Stopwatch, _ next: String
  ) {
    guard !monitors.isEmpty else { return }
    report(
      request, route, attempt: attempt.number, redirect: hops, outcome, since: started, then: next)
  }

  func report(
    _ request: HTTPRequest, _ route: Route, attempt: Int, redirect: Int,
    _ outcome: AttemptOutcome, since started: Stopwatch, then next: String
  ) {
    var metrics: RequestMetrics?
    if case .response(let response) = outcome { metrics = response.metrics }
    report(
      request, route, attempt: attempt, redirect: redirect, status: outcome.status,
      result: Self.result(outcome), metrics: metrics, since: started, then: next)
  }

  /// Tells every monitor, when the body `response` streams ends, that the try ended again, with
  /// the metrics of the whole exchange (its head was told without them).
  func bodyEnded(
    _ response: ApiResponse, _ request: HTTPRequest, _ route: Route, attempt: Int, redirect: Int,
    since started: Stopwatch
  ) {
    guard let stream = response.stream, !monitors.isEmpty else { return }
    let status = response.status
    stream.whenEnded { metrics, failure in
      self.report(
        request, route, attempt: attempt, redirect: redirect, status: status,
        result: failure.map { "\(status), its body cut short: \($0)" }
          ?? "\(status), its body ended",
        metrics: metrics, since: started, then: "")
    }
  }

  /// Tells every monitor of a try that ended so: the one place a `RequestEvent` is made.
  func report(
    _ request: HTTPRequest, _ route: Route, attempt: Int, redirect: Int, status: Int?,
    result: String, metrics: RequestMetrics?, since started: Stopwatch, then next: String
  ) {
    guard !monitors.isEmpty else { return }
    let measured = metrics.map { " (\($0.description))" } ?? ""
    let event = RequestEvent(
      request: request, route: route, attempt: attempt, redirect: redirect,
      status: status, result: result, metrics: metrics, elapsed: started.elapsed,
      next: next, line: traceLine(request, result, since: started, then: measured + next))
    for monitor in monitors { monitor.requestEnded(event) }
  }

  /// Tells every monitor `text`: a note about a call that is not one try.
  func note(_ text: String) {
    for monitor in monitors { monitor.note(text) }
  }

  /// `GET http://host/api/auth [Accept: …, Authorization: <redacted>] → 401 in 3 ms; …`,
  /// written by `requestTrace`: the one builder every trace uses.
  func traceLine(
    _ request: HTTPRequest, _ outcome: AttemptOutcome, since started: Stopwatch,
    then next: String
  ) -> String {
    traceLine(request, Self.result(outcome), since: started, then: next)
  }

  /// The status, or the transport's failure, as a trace says it.
  static func result(_ outcome: AttemptOutcome) -> String {
    switch outcome {
    case .response(let response): "\(response.status)"
    case .failure(let error): "\(error)"
    }
  }

  func traceLine(
    _ request: HTTPRequest, _ result: String, since started: Stopwatch,
    then next: String
  ) -> String {
    requestTrace.line(request, result: result, milliseconds: started.milliseconds, then: next)
  }
}
