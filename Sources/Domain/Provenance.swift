import Foundation
import Synchronization

/// Where a result came from.
public enum ResultOrigin: String, Sendable, Hashable {
  case network, cache
}

/// The origin and age of one result: a cache answer is as old as its stored copy, a network
/// answer is new.
public struct Provenance: Sendable, Hashable {
  public let origin: ResultOrigin
  /// Seconds since the data was fetched from the network.
  public let age: TimeInterval

  public init(origin: ResultOrigin, age: TimeInterval) {
    self.origin = origin
    self.age = age
  }

  /// Collects the provenance of the results a task produced, so a caller sees where its answer
  /// came from without every service returning it: `Provenance.$recorder.withValue(recorder)`.
  @TaskLocal public static var recorder: Recorder?

  /// Notes `provenance` for whoever is collecting in this task.
  public static func record(_ provenance: Provenance) { recorder?.add(provenance) }

  /// The provenance of every result of a task.
  public final class Recorder: Sendable {
    private let entries = Mutex<[Provenance]>([])

    public init() {}

    func add(_ provenance: Provenance) { entries.withLock { $0.append(provenance) } }

    /// Notes `provenance` here too (a layer passing on what it collected).
    public func record(_ provenance: Provenance) { add(provenance) }

    public var all: [Provenance] { entries.withLock { $0 } }

    /// `network`, `cache`, `mixed`, or nil when nothing was recorded.
    public var origin: String? {
      let origins = Set(all.map(\.origin))
      if origins.count > 1 { return "mixed" }
      return origins.first?.rawValue
    }

    /// The oldest cache answer's age, in seconds.
    public var oldestCacheAge: TimeInterval? {
      all.filter { $0.origin == .cache }.map(\.age).max()
    }
  }
}
