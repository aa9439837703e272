import Domain
import HTTPTypes

/// What a call learned, as a value: the decoded value with the status, header fields and
/// validators of the answer it came from (Get's `Response<T>`).
public struct Response<Value> {
  public var value: Value
  public var status: Int
  public var headerFields: HTTPFields

  public init(value: Value, status: Int, headerFields: HTTPFields = [:]) {
    self.value = value
    self.status = status
    self.headerFields = headerFields
  }

  /// Its `ETag` and `Last-Modified`.
  public var validators: CacheValidators { CacheValidators(headerFields) }
}

extension Response: Sendable where Value: Sendable {}

extension CacheValidators {
  /// The `ETag` and `Last-Modified` of an answer's header fields.
  public init(_ headerFields: HTTPFields) {
    self.init(etag: headerFields[.eTag], lastModified: headerFields[.lastModified])
  }
}
