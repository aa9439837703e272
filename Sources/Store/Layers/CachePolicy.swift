/// When a caching layer asks its base and when it answers from the store.
public enum CachePolicy: Sendable, Hashable, CustomStringConvertible {
  /// The store only (offline).
  case cacheOnly
  /// The base only, storing what it answers.
  case networkOnly
  /// The store while its copy is younger than `maxAge`, else the base (the stale copy if the
  /// base cannot be reached).
  case cacheFirst(maxAge: Duration)
  /// The base, falling back to the store when the base cannot be reached, times out or answers
  /// 5xx after its retries; a 4xx is not hidden.
  case networkFirst
  /// The store's copy at once, then the base's answer (as a stream of at most two updates);
  /// a single-value call answers like `networkFirst`.
  case cacheThenNetwork
  /// The store's copy at once; when it is older than `maxAge`, the base refreshes it behind.
  case staleWhileRevalidate(maxAge: Duration)

  public var description: String {
    switch self {
    case .cacheOnly: "cacheOnly"
    case .networkOnly: "networkOnly"
    case .cacheFirst(let maxAge): "cacheFirst(maxAge: \(maxAge))"
    case .networkFirst: "networkFirst"
    case .cacheThenNetwork: "cacheThenNetwork"
    case .staleWhileRevalidate(let maxAge): "staleWhileRevalidate(maxAge: \(maxAge))"
    }
  }
}
