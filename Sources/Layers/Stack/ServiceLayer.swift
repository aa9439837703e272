import Domain

/// Something that wraps every call of a service: caching, logging, de-duplication, memory.
/// Written once, it serves every call of every service.
public protocol ServiceLayer: Sendable {
  /// `call`'s answer: this layer's own, or what `next` (the layers below) gives.
  func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws -> Answer<
    Value
  >

  /// What this layer holds for `call` without asking below (a caching layer's stored answer),
  /// or nil; asked before a call by whoever shows a stored answer first (`LayerStack.updates`).
  func stored<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>?
}

extension ServiceLayer {
  /// Nothing held: a layer that keeps no answers.
  public func stored<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>? {
    nil
  }
}

/// A service's layers, the first outermost: `[logging, cache, …]` then the service underneath.
/// One stack per service, applied once per call.
public struct LayerStack: ServiceLayer {
  /// The layers, outermost first.
  public let layers: [any ServiceLayer]
  /// Who hears where each answer came from; nil until the stack is `observed(by:)`.
  public private(set) var observer: Provenance.Recorder?

  /// A stack of `layers`, outermost first.
  public init(_ layers: [any ServiceLayer]) { self.layers = layers }

  /// This stack, noting the provenance of each answer it gives in `recorder` and handing it
  /// the stored copies its calls have before their final answers.
  public func observed(by recorder: Provenance.Recorder) -> LayerStack {
    var copy = self
    copy.observer = recorder
    return copy
  }

  /// `call` through every layer in turn, then `next`.
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
  /// answer is a `CacheMiss`. The observer stays here, at the top: nothing is carried down.
  public func answer<Service: Sendable, Value: Sendable>(
    _ call: ServiceCall<Value>, from source: Source<Service>?,
    _ fetch: @escaping @Sendable (Service) async throws -> any Validated<Value>
  ) async throws -> Answer<Value> {
    let answer = try await run(call, next: .base(call, source, fetch))
    observer?.record(answer.provenance)
    return answer
  }

  /// The first stored answer a layer holds for `call` (see `ServiceLayer.stored(_:)`), or nil.
  public func stored<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>? {
    for layer in layers {
      if let answer = try await layer.stored(call) { return answer }
    }
    return nil
  }

  /// The call's answers as they come: the stored copy a layer holds first, then the final
  /// answer when it differs from it.
  public func updates<Service: Sendable, Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, from source: Source<Service>?,
    _ fetch: @escaping @Sendable (Service) async throws -> any Validated<Value>
  ) -> AsyncThrowingStream<Answer<Value>, any Error> {
    AsyncThrowingStream { continuation in
      let task = Task {
        do {
          let first = try? await stored(call)
          if let first { continuation.yield(first) }
          let answer = try await run(call, next: .base(call, source, fetch))
          if first?.value != answer.value { continuation.yield(answer) }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
