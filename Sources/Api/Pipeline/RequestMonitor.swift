import Domain
import Foundation
import HTTPTypes

/// What one exchange cost, as the transport measured it (URLSession's `URLSessionTaskMetrics`,
/// libcurl's `CURLINFO_*_TIME_T`): times from the start of the exchange, and bytes each way.
/// Nil where the transport does not know (a reused connection made no new connect; an answer
/// in process crossed no network).
public struct RequestMetrics: Sendable, Equatable {
  /// Until the connection was made (zero on a connection reused).
  public var connect: Duration?
  /// Until TLS was set up, on https.
  public var tls: Duration?
  /// Until the first byte of the answer.
  public var firstByte: Duration?
  /// The whole exchange.
  public var total: Duration
  /// Body bytes sent and received (after decoding).
  public var bytesSent: Int64
  /// Body bytes received.
  public var bytesReceived: Int64

  /// Metrics of these values.
  public init(
    connect: Duration? = nil, tls: Duration? = nil, firstByte: Duration? = nil,
    total: Duration, bytesSent: Int64, bytesReceived: Int64
  ) {
    self.connect = connect
    self.tls = tls
    self.firstByte = firstByte
    self.total = total
    self.bytesSent = bytesSent
    self.bytesReceived = bytesReceived
  }

  /// `connected in 0.3 ms, first byte after 2.1 ms, 120 B sent, 3.4 kB received`.
  public var description: String {
    var parts: [String] = []
    if let connect { parts.append("connected in \(Self.milliseconds(connect))") }
    if let tls { parts.append("TLS after \(Self.milliseconds(tls))") }
    if let firstByte { parts.append("first byte after \(Self.milliseconds(firstByte))") }
    parts.append("\(Self.bytes(bytesSent)) sent")
    parts.append("\(Self.bytes(bytesReceived)) received")
    return parts.joined(separator: ", ")
  }

  static func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
    return String(format: "%.1f ms", value)
  }

  static func bytes(_ count: Int64) -> String {
    switch count {
    case ..<1_000: "\(count) B"
    case ..<1_000_000: String(format: "%.1f kB", Double(count) / 1e3)
    default: String(format: "%.1f MB", Double(count) / 1e6)
    }
  }
}

/// One try of a request as it ended: what was sent (its secrets as the trace redacts them),
/// what came back, what it cost, and what the client does next. Every try is one event: a 503
/// and its retry are two, a redirect and the request it leads to are two. A stream's try that
/// answers is told twice: at its head, without metrics (its body has yet to come), and when its
/// body ends (`200, its body ended`, or `…cut short: …`), with the metrics of the whole exchange.
public struct RequestEvent: Sendable {
  /// The request as sent.
  public let request: HTTPRequest
  /// The route it was built from.
  public let route: Route
  /// 1 for the first try, 2 for the first retry, and so on.
  public let attempt: Int
  /// 0, or how many redirects led to this request within its try.
  public let redirect: Int
  /// The status of the answer, nil when the transport failed.
  public let status: Int?
  /// The status, or the transport's failure, as a trace says it.
  public let result: String
  /// The transport's measures, when it took them.
  public let metrics: RequestMetrics?
  /// The time the try took, on the client's clock.
  public let elapsed: Duration
  /// What happens next: `; retried in 200 ms (backoff)`, `; redirected to …`, or nothing.
  public let next: String
  /// The trace's line for it: method, URL and header fields with secrets redacted, the result,
  /// the time, what happens next, and the metrics (`RequestTrace`).
  public let line: String
}

/// Hears every request a client makes, as it ends (Alamofire's `EventMonitor`): for logs,
/// metrics, a debug screen. Registered through the catalog (`catalog.monitor`), every monitor
/// hears every client's requests; `-v` is the command front's `LogMonitor`. A monitor is told
/// on the task that made the request and must not block it.
public protocol RequestMonitor: Sendable {
  /// Hears a try that ended: its request, outcome and metrics.
  func requestEnded(_ event: RequestEvent)
  /// A note about a call that is not one try (a deadline passed, an origin found unreachable
  /// moments ago, a credential refreshed). None by default.
  func note(_ text: String)
}

extension RequestMonitor {
  public func note(_ text: String) {}
}

/// A monitor that writes each event's trace line, and each note, to `log`: the `-v` trace.
package struct LogMonitor: RequestMonitor {
  /// Where the lines go.
  public let log: @Sendable (String) -> Void

  /// Writes to `log`.
  public init(_ log: @escaping @Sendable (String) -> Void) { self.log = log }

  /// Writes the event's trace line.
  public func requestEnded(_ event: RequestEvent) { log(event.line) }

  public func note(_ text: String) { log(text) }
}

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
