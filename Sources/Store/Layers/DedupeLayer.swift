import Synchronization

/// Concurrent identical calls (same operation key) share one call to the layers below.
public final class DedupeLayer: ServiceLayer {
  private let inFlight = Mutex<[String: Task<any Sendable, any Error>]>([:])

  public init() {}

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    let (task, started) = inFlight.withLock { calls -> (Task<any Sendable, any Error>, Bool) in
      if let running = calls[operation.key] { return (running, false) }
      let task = Task<any Sendable, any Error> { try await next() }
      calls[operation.key] = task
      return (task, true)
    }
    defer {
      if started { inFlight.withLock { _ = $0.removeValue(forKey: operation.key) } }
    }
    // The key names one operation, so a call under way returns this operation's type.
    guard let value = try await task.value as? Value else { return try await next() }
    return value
  }
}
