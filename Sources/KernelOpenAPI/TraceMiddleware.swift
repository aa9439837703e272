import Api
import Domain
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// For an app that keeps its own transport: one line per call, as Kernel's client traces
/// (`getMovie GET /movies/1 -> 200 in 12 ms`), with the values of `secretHeaders` and the
/// environment's token header never written.
public struct TraceMiddleware: ClientMiddleware {
  public let log: @Sendable (String) -> Void
  public let secretHeaders: Set<String>
  /// Measures each call: a `Stopwatch` on the clock it is given.
  public let clock: any Clock<Duration>

  public init(
    secretHeaders: Set<String> = ["authorization"], clock: any Clock<Duration> = ContinuousClock(),
    log: @escaping @Sendable (String) -> Void
  ) {
    self.log = log
    self.secretHeaders = Set(secretHeaders.map { $0.lowercased() })
    self.clock = clock
  }

  public func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    let stopwatch = Stopwatch(clock)
    let secrets = request.headerFields.filter { secretHeaders.contains($0.name.canonicalName) }
      .map { "\($0.name): <redacted>" }
    let line =
      "\(operationID) \(request.method) \(request.path ?? "")"
      + (secrets.isEmpty ? "" : " [\(secrets.joined(separator: ", "))]")
    do {
      let (response, answer) = try await next(request, body, baseURL)
      log("\(line) -> \(response.status.code) in \(stopwatch.milliseconds) ms")
      return (response, answer)
    } catch {
      log("\(line) failed in \(stopwatch.milliseconds) ms: \(error)")
      throw error
    }
  }
}
