import Domain
import Foundation

/// One stored row: a call's answer (its encoded result, or the keys of the entities it holds),
/// or one entity; when it was fetched from the network, and the validators it came with.
public struct CacheEntry: Sendable, Hashable {
  /// This row once a write's edit of it is settled (`CacheStore.settleEdit`); nil for an answer
  /// stored whole, which goes. Taken by the api, it is stale and without validators; not taken,
  /// the api's copy it edited is put back. While other kept writes edit it too (`remaining`),
  /// it stays pending and shows what their edits make of the api's copy (taken, the api's copy
  /// now has the settled write's change).
  public func settled(_ settlement: EditSettlement) -> CacheEntry? {
    guard scope != nil else { return nil }
    var entry = self
    if settlement.taken {
      entry.isStale = true
      entry.validators = CacheValidators()
    }
    if isPending, let original, !settlement.remaining.isEmpty {
      if settlement.taken {
        if let change = settlement.change, let base = Self.patched(original, [change]) {
          entry.original = base
        }
        return entry
      }
      if let shown = Self.patched(original, settlement.remaining) {
        entry.payload = shown
        return entry
      }
    }
    if !settlement.taken, let original { entry.payload = original }
    entry.isPending = false
    entry.original = nil
    return entry
  }

  /// This row showing `changes` (the kept writes' edits of it, oldest first) made of the api's
  /// copy: pending, its `original` the api's copy; itself when it shows them already (as JSON);
  /// nil when it is not JSON.
  func showing(_ changes: [JSONValue]) -> CacheEntry? {
    let base = isPending ? original ?? payload : payload
    guard let value = try? JSONDecoder().decode(JSONValue.self, from: base) else { return nil }
    let shown = changes.reduce(value) { $0.applying(mergePatch: $1) }
    if isPending, (try? JSONDecoder().decode(JSONValue.self, from: payload)) == shown {
      return self
    }
    var entry = self
    guard let encoded = try? JSONEncoder().encode(shown) else { return nil }
    (entry.payload, entry.original, entry.isPending) = (encoded, base, true)
    return entry
  }

  /// `payload` with `patches` applied in order (JSON Merge Patches); nil when it is not JSON.
  private static func patched(_ payload: Data, _ patches: [JSONValue]) -> Data? {
    guard let value = try? JSONDecoder().decode(JSONValue.self, from: payload) else { return nil }
    return try? JSONEncoder().encode(patches.reduce(value) { $0.applying(mergePatch: $1) })
  }

  /// The call's key (`ServiceCall.key`), or an entity's (`Book/7`).
  public var key: String
  /// The answer, encoded by the call's codec; empty for a list kept as `references`.
  public var payload: Data
  /// When it was fetched from the api.
  public var storedAt: Date
  /// The validators it came with, offered to the next request for it.
  public var validators: CacheValidators
  /// Changed by writes the api has not taken yet (`ServiceCall.optimistic`): answered as
  /// `pending`, never offered as the api's copy.
  public var isPending: Bool
  /// For an entity: its partition and type (`<partition>|Book`), what a local query of that
  /// type looks among; nil for an answer.
  public var scope: String?
  /// For an answer made of entities: their keys, in order (the payload is then empty); nil for
  /// an answer stored whole or an entity.
  public var references: [String]?
  /// The api's copy before an optimistic edit changed it: what undoing the edit puts back.
  public var original: Data?
  /// The api took a write that changed it, without answering the entity: the next network read
  /// refreshes it, whatever the policy's age.
  public var isStale: Bool
  /// The api answered that this entity does not exist (404 or 410) when `storedAt`: a row with
  /// no payload and no scope, which no stored list holds, so the store answers "not found" for
  /// it rather than an old copy or "nothing stored" (`CacheStore.removeEntity`).
  public var isGone: Bool
  /// For an entity: the version of its type's stored form it was stored at
  /// (`StoredModel.modelVersion`; 1 for a type that declares none).
  public var modelVersion: Int
  /// For an entity being stored: its fields merge into the stored row's (a JSON Merge Patch:
  /// the fields it lacks keep their stored values) rather than replacing the row, when that row
  /// is an entity of the same version (`EntityShape.isWhole`). Not itself stored.
  public var mergesFields: Bool

  /// An entry of these values.
  public init(
    key: String, payload: Data, storedAt: Date, validators: CacheValidators = CacheValidators(),
    isPending: Bool = false, scope: String? = nil, references: [String]? = nil,
    original: Data? = nil, isStale: Bool = false, isGone: Bool = false, modelVersion: Int = 1,
    mergesFields: Bool = false
  ) {
    self.key = key
    self.payload = payload
    self.storedAt = storedAt
    self.validators = validators
    self.isPending = isPending
    self.scope = scope
    self.references = references
    self.original = original
    self.isStale = isStale
    self.isGone = isGone
    self.modelVersion = modelVersion
    self.mergesFields = mergesFields
  }

  /// This entity's fields merged into `stored`'s when it `mergesFields` and `stored` is an
  /// entity of its version whose edit is not pending, both JSON objects (what SQLite's
  /// `json_patch` makes of them); else itself. Either is the row to keep: its `mergesFields` is
  /// false, as a row read back from SQLite is.
  public func merged(into stored: CacheEntry?) -> CacheEntry {
    var entry = self
    entry.mergesFields = false
    guard mergesFields, let stored, stored.scope != nil, !stored.isGone,
      stored.modelVersion == modelVersion,
      let old = try? JSONDecoder().decode(JSONValue.self, from: stored.payload),
      let new = try? JSONDecoder().decode(JSONValue.self, from: payload),
      let merged = try? JSONEncoder().encode(old.applying(mergePatch: new))
    else { return entry }
    entry.payload = merged
    return entry
  }
}

/// Where a caching layer keeps answers, one entry per call key. `InMemoryStore` is the
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
  /// The entries under `keys`, in their order (nil where there is none), read together: the
  /// entities of a stored list.
  func entries(for keys: [String]) async throws -> [CacheEntry?]
  /// Stores `entries` together, whole or not at all: an answer and the entities it holds. An
  /// entity row (with a `scope`) never replaces one whose edit is pending: the user's edit shows
  /// until its write is settled.
  func store(_ entries: [CacheEntry]) async throws
  /// The entities whose `scope` is `scope` that `query` selects, in its order, at most its
  /// limit: run in the store, not by decoding every entity.
  func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry]
  /// Settles a write's optimistic edit of the row under `key` (`CacheEntry.settled`): taken by
  /// the api, an entity stays as edited but stale (the next network read refreshes it); not
  /// taken (dropped, refused, in conflict), the api's copy it edited (`original`) is put back,
  /// with the edits of the writes still kept made again of it. A row stored whole is removed
  /// either way. In one transaction.
  func settleEdit(of key: String, _ settlement: EditSettlement) async throws
  /// The keys of the rows an edit not yet settled changed (`isPending`).
  func pendingKeys() async throws -> [String]
  /// When the list under `key` was stored, if every key it refers to (`references`) has a row
  /// (a tombstone too): whether a complete collection's entities are all still stored, asked
  /// without reading them or marking them used. Nil when there is no such list, or one of its
  /// keys has no row.
  func storedAtIfWhole(_ key: String) async throws -> Date?
  /// Takes the entity under `key` out of the store, in one transaction: its key leaves every
  /// stored list that held it, so those lists shrink and no local query finds it; with
  /// `goneAt` (the api answered its item call 404 or 410 then, or a complete list of its whole
  /// type lacked it) its row becomes a tombstone (`CacheEntry.isGone`), else it goes. An entity
  /// with an edit pending stays as it is, and this returns false: the write is sent, and its own
  /// answer decides. A later answer that holds the entity again stores it over the tombstone.
  func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool
  /// Applies one page of a changes feed in one transaction (`ServiceStack.sync`): its entities
  /// stored (one whose edit is pending keeps showing the edit, the api's new copy becoming the
  /// one undoing it puts back), its deleted entities removed as `removeEntity` with `goneAt`
  /// removes them, and the feed's token stored — so a sync stopped at any point goes on from
  /// the last page applied, none lost and none applied twice. Only while the stored token is
  /// still the one the page was asked with (`StoredChanges.asked`): when another sync (another
  /// process) moved it meanwhile, nothing is written and this returns false, so an older page
  /// never lands over a newer one.
  @discardableResult
  func apply(_ changes: StoredChanges) async throws -> Bool
  /// Notices of the changes committed to the store from now on, for a watch
  /// (`LayerStack.watch`): by this process, and by any other that shares the store. A store
  /// that cannot tell ends the stream at once (a watch then shows what it first read); one whose
  /// data is gone from under it (its file deleted or replaced) throws why, and the watch ends
  /// with that reason; a store that wraps another passes the other's on.
  func changes() -> AsyncThrowingStream<Void, any Error>
}

extension CacheStore {
  /// By reading the rows: a store that can count them where they are (SQLite) says so.
  public func storedAtIfWhole(_ key: String) async throws -> Date? {
    guard let list = try await entry(for: key), let keys = list.references,
      try await entries(for: keys).allSatisfy({ $0 != nil })
    else { return nil }
    return list.storedAt
  }

  /// One read per key: a store that can read them together (SQLite, in one transaction) says so.
  public func entries(for keys: [String]) async throws -> [CacheEntry?] {
    var found: [CacheEntry?] = []
    for key in keys { found.append(try await entry(for: key)) }
    return found
  }

  /// One write per entry: a store with transactions stores them in one.
  public func store(_ entries: [CacheEntry]) async throws {
    for entry in entries { try await store(entry) }
  }

  /// A store that keeps no entities answers no local query.
  public func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] { [] }

}

/// One page of a changes feed as the store applies it (`CacheStore.apply`).
public struct StoredChanges: Sendable {
  /// Entity rows to store, each with its scope.
  public var entities: [CacheEntry]
  /// The keys of the entities the api deleted.
  public var gone: [String]
  /// When the api said so.
  public var goneAt: Date
  /// The feed's token row: what the next page is asked with.
  public var token: CacheEntry
  /// The token this page was asked with, nil from the start: the stored one must still be it.
  public var asked: String?

  /// Changes of these values.
  public init(
    entities: [CacheEntry], gone: [String], goneAt: Date, token: CacheEntry, asked: String? = nil
  ) {
    self.entities = entities
    self.gone = gone
    self.goneAt = goneAt
    self.token = token
    self.asked = asked
  }

  /// Whether `stored`, the token row as the store holds it, is still the token this page was
  /// asked with.
  public func follows(_ stored: CacheEntry?) -> Bool { Self.token(of: stored) == asked }

  /// The token a stored token row holds; nil (from the start) for none, a tombstone or an empty
  /// one.
  public static func token(of row: CacheEntry?) -> String? {
    let token = row.flatMap { $0.isGone ? nil : String(data: $0.payload, encoding: .utf8) }
    return token?.isEmpty == false ? token : nil
  }
}

/// How a write's optimistic edit of one stored copy ends (`CacheStore.settleEdit`).
public struct EditSettlement: Sendable, Hashable {
  /// Whether the api took the write; not when it was dropped, refused, in conflict, or is no
  /// longer kept.
  public var taken: Bool
  /// What the settled write changed of the copy (`PendingWrite.edits`), nil when unknown.
  public var change: JSONValue?
  /// What the writes still kept that edit the copy changed of it, oldest first.
  public var remaining: [JSONValue]

  /// A settlement of these values.
  public init(taken: Bool, change: JSONValue? = nil, remaining: [JSONValue] = []) {
    self.taken = taken
    self.change = change
    self.remaining = remaining
  }
}

/// What a cache holds, for `kernel cache stats`.
public struct CacheStatistics: Sendable, Equatable {
  /// The file, or nil in memory.
  public var file: String?
  /// How many bytes it takes (the file's size on disk).
  public var bytes: Int64
  /// How many answers are stored.
  public var entries: Int
  /// When the oldest and the newest answer were stored.
  public var oldest: Date?
  /// When the newest answer was stored.
  public var newest: Date?
  /// How many answers each api origin gave (`http://127.0.0.1:8080`: the first word of a
  /// partitioned key, see `CachingLayer.partition`); "" for keys of no partition.
  public var entriesByOrigin: [String: Int]
  /// The budget the file keeps within (`cache.maxBytes`), when it has one.
  public var maxBytes: Int64?
  /// The stored entity rows (not gone) of each type, by the version of its model they were
  /// stored at (`StoredModel.modelVersion`): `["Movie": [1: 12, 2: 228]]`.
  public var entitiesByModel: [String: [Int: Int]] = [:]
  /// The scopes entity rows (not gone) are stored under (`<partition>|Movie`), for reading
  /// them with `CacheStore.query(scope:_:)`.
  public var entityScopes: Set<String> = []

  /// Statistics of these values.
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

  /// The rows of each type that no longer read as its model now (`current`: each type's
  /// version and whether it declares migrations): stored at an older version it has no
  /// migration from, or at a newer one. Offline they are left out of answers; a network
  /// profile fetches them anew.
  public func olderModelRows(current: [String: (version: Int, migrates: Bool)]) -> [String: Int] {
    var older: [String: Int] = [:]
    for (type, versions) in entitiesByModel {
      guard let model = current[type] else { continue }
      let count = versions.reduce(0) { sum, stored in
        let reads = stored.key == model.version || (stored.key < model.version && model.migrates)
        return sum + (reads ? 0 : stored.value)
      }
      if count > 0 { older[type] = count }
    }
    return older
  }

  /// The type of an entity row's `scope` (`<partition>|Movie`): after its last `|`.
  public static func type(ofScope scope: String) -> String {
    scope.split(separator: "|", omittingEmptySubsequences: false).last.map(String.init) ?? scope
  }

  /// The origin a stored key belongs to: its first word, or "" when it has none.
  public static func origin(ofKey key: String) -> String {
    guard let space = key.firstIndex(of: " ") else { return "" }
    return String(key[..<space])
  }
}

/// Looking after a cache as a whole, so the command front never names the store's type.
package protocol CacheMaintenance: Sendable {
  /// What the cache holds now.
  func statistics() async throws -> CacheStatistics
  /// Deletes every stored answer, or those of one api `origin` (`http://127.0.0.1:8080`, every
  /// identity's), in one transaction, but an entity showing an edit not yet sent: it is the
  /// user's, kept with its write until the outbox settles it (`outbox drop` undoes it); returns
  /// how many were deleted.
  func clear(origin: String?) async throws -> Int
}

extension CacheMaintenance {
  /// Deletes every stored answer but those showing an edit not yet sent, in one transaction;
  /// returns how many were deleted.
  public func clear() async throws -> Int { try await clear(origin: nil) }
}
