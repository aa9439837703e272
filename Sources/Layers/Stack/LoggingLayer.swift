import Domain

/// Logs each call: the call, where the answer came from, how long it took, or the error.
/// It logs keys and outcomes only, never a token or a body.
public struct LoggingLayer: ServiceLayer {
  let log: @Sendable (String) -> Void
  /// Times each call.
  let clock: any Clock<Duration>

  /// Logs to `log`, timing each call on `clock`.
  public init(
    log: @escaping @Sendable (String) -> Void, clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.log = log
    self.clock = clock
  }

  /// `call` from below, logged with its outcome and time.
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    let started = Stopwatch(clock)
    do {
      let answer = try await next()
      log("\(call.name) \(call.key): from \(answer.origin) in \(started.milliseconds) ms")
      return answer
    } catch {
      log("\(call.name) \(call.key): failed after \(started.milliseconds) ms: \(error)")
      throw error
    }
  }
}
