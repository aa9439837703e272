import Domain
import Foundation

/// A call's result as the layers pass it up: the value with where it came from, how old it is
/// and the validators it came with. Layers read and return these as values; only the top of
/// the stack records the provenance (once) for whoever asked.
public struct Answer<Value: Sendable>: Sendable {
  /// The value.
  public var value: Value
  /// Where it came from.
  public var origin: ResultOrigin
  /// Seconds since the value was fetched from the network.
  public var age: TimeInterval
  /// The `ETag` and `Last-Modified` it came with, offered back on the next conditional request.
  public var validators: CacheValidators

  /// An answer of `value` from `origin`, `age` seconds old, with its validators.
  public init(
    value: Value, origin: ResultOrigin, age: TimeInterval = 0,
    validators: CacheValidators = CacheValidators()
  ) {
    self.value = value
    self.origin = origin
    self.age = age
    self.validators = validators
  }

  /// Its origin and age.
  public var provenance: Provenance { Provenance(origin: origin, age: age) }
}

extension Answer: Equatable where Value: Equatable {}

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
