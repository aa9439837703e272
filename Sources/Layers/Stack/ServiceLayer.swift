import Domain

/// Something that wraps every call of a service: caching, logging, de-duplication, memory.
/// Written once, it serves every call of every service.
public protocol ServiceLayer: Sendable {
  func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws -> Answer<
    Value
  >
}

/// A service's layers, the first outermost: `[logging, cache, …]` then the service underneath.
/// One stack per service, applied once per call.
public struct LayerStack: ServiceLayer {
  public let layers: [any ServiceLayer]
  /// Who hears where each answer came from; nil until the stack is `observed(by:)`.
  public private(set) var observer: Provenance.Recorder?

  public init(_ layers: [any ServiceLayer]) { self.layers = layers }

  /// This stack, noting the provenance of each answer it gives in `recorder` and handing it
  /// the early answers of its calls.
  public func observed(by recorder: Provenance.Recorder) -> LayerStack {
    var copy = self
    copy.observer = recorder
    return copy
  }

  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    var chain = next
    for layer in layers.reversed() {
      let inner = chain
      chain = Next { offered in
        // A layer that offers nothing passes on what the layer above it offered.
        try await layer.run(call, next: Next { try await inner(offering: $0 ?? offered) })
      }
    }
    return try await chain()
  }

  /// What a layered service's method does: runs `call` through the stack down to `fetch` on
  /// the service `source` makes for it, notes where the answer came from (once, for the
  /// observer), returns it. With no source (a store-only stack) a call the layers do not
  /// answer is a `CacheMiss`.
  public func answer<Service: Sendable, Value: Sendable>(
    _ call: ServiceCall<Value>, from source: Source<Service>?,
    _ fetch: @escaping @Sendable (Service) async throws -> Value
  ) async throws -> Value {
    var call = call
    call.observer = observer
    let answer = try await run(call, next: .base(call, source, fetch))
    observer?.record(answer.provenance)
    return answer.value
  }

  /// The call's answers as they come: a `cacheThenNetwork` cache's stored copy first, then the
  /// final answer when it differs from it. Other policies give one update.
  public func updates<Service: Sendable, Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, from source: Source<Service>?,
    _ fetch: @escaping @Sendable (Service) async throws -> Value
  ) -> AsyncThrowingStream<Answer<Value>, any Error> {
    AsyncThrowingStream { continuation in
      let first = EarlySlot<Value>()
      let recorder = Provenance.Recorder { early in
        guard early.key == call.key, let value = early.value as? Value else { return }
        let answer = Answer(
          value: value, origin: early.provenance.origin, age: early.provenance.age)
        if first.set(answer) { continuation.yield(answer) }
      }
      var call = call
      call.observer = recorder
      let task = Task { [call] in
        do {
          let answer = try await run(call, next: .base(call, source, fetch))
          if first.value?.value != answer.value { continuation.yield(answer) }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
