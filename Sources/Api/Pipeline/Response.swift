import Domain
import Foundation
import HTTPTypes

/// What a call learned, as a value: the decoded value with the status, header fields, body and
/// validators of the answer it came from (Get's `Response<T>`), so what lies beside the value
/// (`meta.next_page`, a `Link` header) can be read too.
public struct Response<Value: Sendable>: Sendable {
  /// The decoded value.
  public var value: Value
  /// The answer's status.
  public var status: Int
  /// The answer's header fields.
  public var headerFields: HTTPFields
  /// The whole body the value was decoded from.
  public var body: Data

  /// A response of these values.
  public init(value: Value, status: Int, headerFields: HTTPFields = [:], body: Data = Data()) {
    self.value = value
    self.status = status
    self.headerFields = headerFields
    self.body = body
  }

  /// The JSON value at `keyPath` in the body (`"meta.next_page"`), nil when there is none.
  public func field(_ keyPath: String) -> JSONValue? {
    guard let json = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
    return json[keyPath.split(separator: ".").map(String.init)]
  }

  /// The targets of the `Link` header (RFC 8288) by relation: `links["next"]`.
  public var links: [String: String] { Link.targets(in: headerFields) }

  /// Its `ETag` and `Last-Modified`.
  public var validators: CacheValidators { CacheValidators(headerFields) }
}

extension Response {
  /// The same answer with its value changed by `transform` (an api type made a domain type).
  public func map<Other: Sendable>(_ transform: (Value) throws -> Other) rethrows -> Response<Other>
  {
    Response<Other>(
      value: try transform(value), status: status, headerFields: headerFields, body: body)
  }
}

extension CacheValidators {
  /// The `ETag` and `Last-Modified` of an answer's header fields.
  public init(_ headerFields: HTTPFields) {
    self.init(etag: headerFields[.eTag], lastModified: headerFields[.lastModified])
  }
}
