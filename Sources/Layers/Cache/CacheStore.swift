import Domain
import Foundation

/// One call's stored answer: its encoded result, when it was fetched from the network, and the
/// validators it came with.
public struct CacheEntry: Sendable, Hashable {
  public var key: String
  public var payload: Data
  public var storedAt: Date
  public var validators: CacheValidators
  /// Changed by writes the api has not taken yet (`WriteCall.optimistic`): answered as
  /// `pending`, never offered as the api's copy.
  public var isPending: Bool

  public init(
    key: String, payload: Data, storedAt: Date, validators: CacheValidators = CacheValidators(),
    isPending: Bool = false
  ) {
    self.key = key
    self.payload = payload
    self.storedAt = storedAt
    self.validators = validators
    self.isPending = isPending
  }
}

/// Where a caching layer keeps answers, one entry per call key. `InMemoryCacheStore` is the
/// twin tests use; the Store module's SQLite database is the one apps keep on disk. A store
/// reports its failures as errors whose description names the file and the cause.
public protocol CacheStore: Sendable {
  /// The entry stored under `key`, or nil.
  func entry(for key: String) async throws -> CacheEntry?
  /// Stores `entry`, replacing any under its key, whole or not at all.
  func store(_ entry: CacheEntry) async throws
  /// Marks the entry under `key` as fetched again at `storedAt` (the api said 304), keeping its
  /// payload; nothing when there is none.
  func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws
  /// Removes the entry under `key`, if any (a sent write made it stale).
  func remove(_ key: String) async throws
}

/// What a cache holds, for `kernel cache stats`.
public struct CacheStatistics: Sendable, Equatable {
  /// The file, or nil in memory.
  public var file: String?
  public var bytes: Int64
  /// How many answers are stored.
  public var entries: Int
  /// When the oldest and the newest answer were stored.
  public var oldest: Date?
  public var newest: Date?
  /// How many answers each api origin gave (`http://127.0.0.1:8080`: the first word of a
  /// partitioned key, see `CachingLayer.partition`); "" for keys of no partition.
  public var entriesByOrigin: [String: Int]
  /// The budget the file keeps within (`cache.maxBytes`), when it has one.
  public var maxBytes: Int64?

  public init(
    file: String?, bytes: Int64, entries: Int, oldest: Date?, newest: Date?,
    maxBytes: Int64? = nil, entriesByOrigin: [String: Int] = [:]
  ) {
    self.maxBytes = maxBytes
    self.file = file
    self.bytes = bytes
    self.entries = entries
    self.oldest = oldest
    self.newest = newest
    self.entriesByOrigin = entriesByOrigin
  }

  /// The origin a stored key belongs to: its first word, or "" when it has none.
  public static func origin(ofKey key: String) -> String {
    guard let space = key.firstIndex(of: " ") else { return "" }
    return String(key[..<space])
  }
}

/// Looking after a cache as a whole, so the command front never names the store's type.
public protocol CacheMaintenance: Sendable {
  func statistics() async throws -> CacheStatistics
  /// Deletes every stored answer, or those of one api `origin` (`http://127.0.0.1:8080`, every
  /// identity's), in one transaction; returns how many there were.
  func clear(origin: String?) async throws -> Int
}

extension CacheMaintenance {
  /// Deletes every stored answer in one transaction; returns how many there were.
  public func clear() async throws -> Int { try await clear(origin: nil) }
}

/// Nothing is stored for a call, and the policy does not ask the network; or the call is one
/// no cache answers (a write), under a stack with no api.
public struct CacheMiss: Error, Sendable, CustomStringConvertible, ClassifiedError {
  public let what: String
  /// Whether a cache could answer the call once the api has (false for a write).
  public let cachable: Bool

  public init(what: String, cachable: Bool = true) {
    self.what = what
    self.cachable = cachable
  }

  public var failure: ServiceFailure { .unreachable }

  public var description: String {
    cachable
      ? "Nothing is cached for \(what), and the offline profile does not ask the api; run it once with a network profile."
      : "\(what.prefix(1).uppercased() + what.dropFirst()) needs the api, and this profile's stack has none; run it with a network profile."
  }
}
