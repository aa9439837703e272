import Foundation
import Synchronization

/// Where a result came from.
public enum ResultOrigin: String, Sendable, Hashable {
  /// From the api (`network`), or a stored copy (`cache`).
  case network, cache
  /// A cached copy changed by writes the api has not taken yet.
  case pending
  /// Answered by a local query over stored entities, for a call never stored: the api may
  /// know more.
  case local
  /// Gathered from answers of more than one origin (the api's and stored copies).
  case mixed
}

/// The origin and age of one result: a cache answer is as old as its stored copy, a network
/// answer is new.
public struct Provenance: Sendable, Hashable {
  /// Where it came from.
  public let origin: ResultOrigin
  /// Seconds since the data was fetched from the network.
  public let age: TimeInterval

  /// A result from `origin`, fetched `age` seconds ago.
  public init(origin: ResultOrigin, age: TimeInterval) {
    self.origin = origin
    self.age = age
  }

  /// Where the answers a caller asked for came from: given to the service it asks (a layered
  /// service's `observed(by:)`), which notes each answer's provenance here as it returns it.
  public final class Recorder: Sendable {
    private let entries = Mutex<[Provenance]>([])

    /// A recorder with nothing noted yet.
    public init() {}

    /// Notes the provenance of an answer given to the caller.
    public func record(_ provenance: Provenance) { entries.withLock { $0.append(provenance) } }

    /// Every provenance noted so far, in order.
    public var all: [Provenance] { entries.withLock { $0 } }

    /// `network`, `cache`, `pending`, `local`, `mixed`, or nil when nothing was recorded.
    public var origin: String? {
      let origins = Set(all.map(\.origin))
      if origins.count > 1 { return "mixed" }
      return origins.first?.rawValue
    }

    /// The oldest cache answer's age, in seconds.
    public var oldestCacheAge: TimeInterval? {
      all.filter { $0.origin != .network }.map(\.age).max()
    }
  }
}
