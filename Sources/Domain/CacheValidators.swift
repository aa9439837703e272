/// What makes a request conditional: the validators of a stored copy, offered to the one
/// request that would replace it (`If-None-Match`, `If-Modified-Since`).
public struct CacheValidators: Sendable, Hashable, Codable {
  /// The `ETag` the answer came with, sent back as `If-None-Match`.
  public var etag: String?
  /// The `Last-Modified` the answer came with, sent back as `If-Modified-Since`.
  public var lastModified: String?

  /// Validators as an answer's headers gave them; none by default.
  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  /// Whether it holds neither validator: nothing to make a request conditional with.
  public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// The stored copy is still current (HTTP 304): serve it and refresh its age.
package struct NotModified: Error, Sendable {
  /// The answer "not modified" (304).
  public init() {}
}
