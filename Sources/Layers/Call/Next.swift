import Domain
import Foundation

/// What a layer calls to go on down the stack: the next layer, or the service underneath.
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

  /// The source underneath every layer: the service it makes for this call, offered the
  /// validators the layers above offered; its answer comes back with its own validators, new
  /// from the network, and a 304 is its `NotModified`. With no source, a call no layer
  /// answered is a `CacheMiss`.
  public static func base<Service: Sendable>(
    _ call: ServiceCall<Value>, _ source: Source<Service>?,
    _ fetch: @escaping @Sendable (Service) async throws -> any Validated<Value>
  ) -> Next<Value> {
    guard let source else {
      return Next { _ in throw CacheMiss(what: call.summary, cachable: call.codec != nil) }
    }
    return Next { offered in
      let answered = try await fetch(source.make(offered))
      return Answer(value: answered.value, origin: .network, validators: answered.validators)
    }
  }
}
