import Foundation

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

}
