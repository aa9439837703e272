/// When a caching layer asks below it and when it answers from the store.
public enum CachePolicy: Sendable, Hashable, CustomStringConvertible {
  /// The store only (offline).
  case cacheOnly
  /// Below only, storing what it answers.
  case networkOnly
  /// The store while its copy is younger than `maxAge`, else below (the stale copy if below
  /// cannot be reached).
  case cacheFirst(maxAge: Duration)
  /// Below, falling back to the store when it cannot be reached, times out or answers 5xx
  /// after its retries; a 4xx is not hidden.
  case networkFirst
  /// The store's copy at once, as an early answer (`ServiceStack.answer(_:early:)`), then below's answer
  /// as the final one, falling back like `networkFirst`.
  case cacheThenNetwork
  /// The store's copy at once; when it is older than `maxAge`, below refreshes it behind, in
  /// the layer's `BackgroundWork`.
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
