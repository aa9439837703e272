import Domain
import Foundation

/// Logs each call: the operation, where the answer came from, how long it took, or the error.
/// It logs keys and outcomes only, never a token or a body.
public struct LoggingLayer: ServiceLayer {
  let log: @Sendable (String) -> Void

  public init(log: @escaping @Sendable (String) -> Void) { self.log = log }

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let recorder = Provenance.Recorder()
    let outer = Provenance.recorder
    let started = ContinuousClock.now
    do {
      let value = try await Provenance.$recorder.withValue(recorder) { try await next() }
      for provenance in recorder.all { outer?.record(provenance) }
      log(
        "\(operation.name) \(operation.key): from \(recorder.origin ?? "the base") in \(Self.milliseconds(since: started)) ms"
      )
      return value
    } catch {
      for provenance in recorder.all { outer?.record(provenance) }
      log(
        "\(operation.name) \(operation.key): failed after \(Self.milliseconds(since: started)) ms: \(error)"
      )
      throw error
    }
  }

  private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let elapsed = ContinuousClock.now - start
    return Int(
      elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
  }
}
