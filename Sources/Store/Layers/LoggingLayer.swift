import Domain
import Foundation

/// Logs each call: the operation, where the answer came from, how long it took, or the error.
/// It logs keys and outcomes only, never a token or a body.
public struct LoggingLayer: ServiceLayer {
  let log: @Sendable (String) -> Void
  /// Times each call.
  let clock: any Clock<Duration>

  public init(
    log: @escaping @Sendable (String) -> Void, clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.log = log
    self.clock = clock
  }

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let recorder = Provenance.Recorder()
    let outer = Provenance.recorder
    let started = Stopwatch(clock)
    do {
      let value = try await Provenance.$recorder.withValue(recorder) { try await next() }
      for provenance in recorder.all { outer?.record(provenance) }
      log(
        "\(operation.name) \(operation.key): from \(recorder.origin ?? "the base") in \(started.milliseconds) ms"
      )
      return value
    } catch {
      for provenance in recorder.all { outer?.record(provenance) }
      log(
        "\(operation.name) \(operation.key): failed after \(started.milliseconds) ms: \(error)"
      )
      throw error
    }
  }
}
