import Synchronization

/// What makes a request conditional: the validators of a stored copy.
public struct CacheValidators: Sendable, Hashable, Codable {
  public var etag: String?
  public var lastModified: String?

  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// The hook between a cache layer and whatever fetches underneath it, so neither imports the
/// other: the cache offers the validators of its copy for the calls it makes; a fetcher that
/// understands them sends them (`If-None-Match`, `If-Modified-Since`), reports the validators
/// of what it got back, and throws `NotModified` when the copy is still good.
public enum ConditionalRequest {
  /// The validators offered for requests made in this task.
  @TaskLocal public static var offered: CacheValidators?
  /// Where a fetcher reports the validators of a fresh response.
  @TaskLocal public static var received: Received?

  /// A slot for the validators of the response a fetch got.
  public final class Received: Sendable {
    private let slot = Mutex<CacheValidators?>(nil)

    public init() {}

    public var validators: CacheValidators? { slot.withLock { $0 } }

    public func set(_ validators: CacheValidators) { slot.withLock { $0 = validators } }
  }
}

/// The stored copy is still current (HTTP 304): serve it and refresh its age.
public struct NotModified: Error, Sendable {
  public init() {}
}
