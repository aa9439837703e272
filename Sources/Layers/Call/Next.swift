import Api
import Domain
import Foundation

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
      var headers: [String: String] = [:]
      for field in response.headerFields {
        let name = field.name.canonicalName
        headers[name] = headers[name].map { $0 + ", " + field.value } ?? field.value
      }
      return Answer(
        value: response.value, origin: .network, validators: response.validators,
        status: response.status, headers: headers)
    }
  }
}
