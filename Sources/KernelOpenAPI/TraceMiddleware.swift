import Api
import Domain
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// For an app that keeps its own transport: one line per call, written by Kernel's one trace
/// builder (`RequestTrace`), so a secret header or query item (an `apiKey(query: api_key)`
/// added after authentication) is redacted as in the client's own `-v` trace:
/// `getMovie: GET http://127.0.0.1:8080/api/movies/1 [Authorization: <redacted>] → 200 in 12 ms`.
public struct TraceMiddleware: ClientMiddleware {
  /// Where each line goes.
  public let log: @Sendable (String) -> Void
  /// What the lines redact: pass an `ApiClient`'s `requestTrace` to redact what it does.
  public let trace: RequestTrace
  /// Measures each call: a `Stopwatch` on the clock it is given.
  public let clock: any Clock<Duration>

  /// Lines redacted by `trace`, timed on `clock`, written to `log`.
  public init(
    trace: RequestTrace = RequestTrace(), clock: any Clock<Duration> = ContinuousClock(),
    log: @escaping @Sendable (String) -> Void
  ) {
    self.log = log
    self.trace = trace
    self.clock = clock
  }

  public func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let stopwatch = Stopwatch(clock)
    var base = baseURL.absoluteString
    while base.hasSuffix("/") { base.removeLast() }
    let target = base + (request.path ?? "")
    func line(_ result: String) -> String {
      "\(operationID): "
        + trace.line(request, target: target, result: result, milliseconds: stopwatch.milliseconds)
    }
    do {
      let (response, answer) = try await next(request, body, baseURL)
      log(line("\(response.status.code)"))
      return (response, answer)
    } catch {
      log(line("\(error)"))
      throw error
    }
  }
}
