/// What makes a request conditional: the validators of a stored copy, offered to the one
/// request that would replace it (`If-None-Match`, `If-Modified-Since`).
public struct CacheValidators: Sendable, Hashable, Codable {
  public var etag: String?
  public var lastModified: String?

  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// The stored copy is still current (HTTP 304): serve it and refresh its age.
public struct NotModified: Error, Sendable {
  public init() {}
}
