import Api
import Domain
import Foundation

/// Something that wraps every call of a service: caching, logging, de-duplication, memory.
/// Written once, it serves every call of every service.
public protocol ServiceLayer: Sendable {
  /// `call`'s answer: this layer's own, or what `next` (the layers below) gives.
  func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws -> Answer<
    Value
  >

  /// What this layer holds for `call` without asking below (a caching layer's stored answer),
  /// or nil; asked before a call by whoever shows a stored answer first
  /// (`ServiceStack.answer(_:early:)`).
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

  /// A stack of `layers`, outermost first.
  public init(_ layers: [any ServiceLayer]) { self.layers = layers }

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

  /// `call` through the stack down to its request sent through `client` (`Next.api`). With no
  /// client (a store-only stack) a call the layers do not answer is a `LayerError.miss`.
  public func answer<Value: Sendable>(_ call: ServiceCall<Value>, client: ApiClient?)
    async throws -> Answer<Value>
  {
    try await run(call, next: .api(call, client))
  }

  /// The first stored answer a layer holds for `call` (see `ServiceLayer.stored(_:)`), or nil.
  public func stored<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>? {
    for layer in layers {
      if let answer = try await layer.stored(call) { return answer }
    }
    return nil
  }
}

/// What a layer calls to go on down the stack: the next layer, or the api underneath.
/// A caching layer offers its stored copy's validators, so the service can ask "changed since?".
public struct Next<Value: Sendable>: Sendable {
  private let body: @Sendable (CacheValidators?) async throws -> Answer<Value>

  /// Goes on down by `body`, which gets the validators offered.
  public init(
    _ body: @escaping @Sendable (_ offered: CacheValidators?) async throws -> Answer<Value>
  ) {
    self.body = body
  }

  /// The answer from below, offering `validators` to the call underneath.
  public func callAsFunction(offering validators: CacheValidators? = nil) async throws -> Answer<
    Value
  > {
    try await body(validators)
  }

  /// The api underneath every layer: `call`'s request sent through `client`, offered the
  /// validators the layers above offered (`ApiClient.offering(_:)`); its answer comes back with
  /// its own validators, new from the network, and a 304 is its `NotModified`. With no client
  /// (the store alone), or a call that carries no request, a call no layer answered is a
  /// `LayerError.miss`.
  public static func api(_ call: ServiceCall<Value>, _ client: ApiClient?) -> Next<Value> {
    guard let client, call.fetch != nil else {
      return Next { _ in throw LayerError.missing(call) }
    }
    return Next { offered in
      let response = try await call.response(from: client.offering(offered))
      return Answer(
        value: response.value, origin: .network, validators: response.validators,
        status: response.status, headers: response.headerFields.byName)
    }
  }
}
