import Domain
import Synchronization

/// Concurrent identical calls (same key) share one call to the layers below. A call with no
/// codec (a write, a call whose answer is never kept) is never shared: two adds of different
/// books may have one key, and each must reach the api.
public final class DedupeLayer: ServiceLayer {
  private let inFlight = Mutex<[String: Task<any Sendable, any Error>]>([:])

  /// Nothing in flight.
  public init() {}

  /// `call`, sharing the answer of an identical call in flight.
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    guard call.codec != nil else { return try await next() }
    let (task, started) = inFlight.withLock { calls -> (Task<any Sendable, any Error>, Bool) in
      if let running = calls[call.key] { return (running, false) }
      let task = Task<any Sendable, any Error> { try await next() }
      calls[call.key] = task
      return (task, true)
    }
    defer {
      if started { inFlight.withLock { _ = $0.removeValue(forKey: call.key) } }
    }
    // The key names one call, so a call under way answers with this call's type.
    guard let answer = try await task.value as? Answer<Value> else { return try await next() }
    return answer
  }
}
