import Domain
import Foundation
import Synchronization

/// Stores what the layers below answer and answers from a `CacheStore`, under a `CachePolicy`.
///
/// A call is answered from the store only with the entry stored under its own key (its own
/// result, its own time) in the layer's `partition`: the api's origin (and whatever identity an
/// app adds), so one environment's copy, or its validators, never serve another. A failed call
/// below never deletes anything. The stored copy's
/// validators are offered to the call below (see `Next.api`); a 304 serves the copy and makes it
/// new. A store that cannot be read or written never costs the answer: the layer warns once
/// per cause and goes on as if nothing were stored (`cacheOnly` reports the failure instead).
public struct CachingLayer: ServiceLayer {
  /// Where answers are kept.
  public let store: any CacheStore
  /// When the store answers and when the api is asked.
  public let policy: CachePolicy
  /// Whose answers these are: `https://api.example:443` for the environment in use, with an
  /// app's identity (`https://api.example:443 user 42`) when answers are private. Every key
  /// this layer reads or writes starts with it.
  public let partition: String
  let clock: WallClock
  let background: BackgroundWork
  let warnings: Warnings

  /// - Parameters:
  ///   - store: where answers and entities are kept.
  ///   - policy: when the store answers and when the layer below is asked.
  ///   - partition: whose answers these are (see `partition`).
  ///   - clock: the wall clock ages are measured on.
  ///   - background: where stale-while-revalidate refreshes run; a process waits on it before
  ///     it exits (`BackgroundWork.settle`).
  ///   - warn: hears, once per cause, that the store could not be read or written.
  public init(
    store: any CacheStore, policy: CachePolicy, partition: String = "", clock: WallClock = .system,
    background: BackgroundWork = BackgroundWork(),
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.store = store
    self.policy = policy
    self.partition = partition
    self.clock = clock
    self.background = background
    self.warnings = Warnings(warn)
  }

  /// The partition of an api's answers: its `root` (the environment's origin and base path,
  /// `https://api.example:443/api/`), and `identity` (the signed-in user, as a credential names
  /// it) when there is one, so one user's private answers never serve another:
  /// `https://api.example:443/api/ user 42`. The root holds no space: the cache's statistics
  /// and `cache clear` go by the key's first word.
  public static func partition(root: String, identity: String?) -> String {
    guard let identity, !identity.isEmpty else { return root }
    return root + " user " + identity
  }

  /// Returns once every refresh this layer started behind an answer has stored its result or
  /// failed.
  public func settle() async { await background.settle() }

  /// `call` answered from the store or from below, as the policy says; what comes from below is
  /// stored.
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    guard let codec = call.codec else { return try await next() }
    if let local = call.local, let shape = call.entities { try shape.check(local) }
    // A tombstone is what is stored when the api said the entity does not exist: it answers
    // "not found" wherever a stored copy would answer, and the api is asked where it would be.
    var gone: LayerError?
    let found: Found<Value>?
    do { found = try await read(call, codec) } catch let error as LayerError {
      guard case .gone = error else { throw error }
      (found, gone) = (nil, error)
    }
    let stored = found?.answer
    switch policy {
    case .cacheOnly:
      if let stored { return stored }
      if let gone { throw gone }
      if let local = try await localAnswer(call) { return local }
      throw LayerError.miss(what: call.summary)
    case .networkOnly:
      return try await fetch(call, codec, next, stored: nil)
    case .cacheFirst(let maxAge):
      if let found, !found.isStale, found.answer.age <= maxAge.seconds { return found.answer }
      if let gone, case .gone(_, let age) = gone, age <= maxAge.seconds { throw gone }
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .networkFirst:
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .cacheThenNetwork:
      // The stored copy was there to be shown first (`stored(_:)`); the answer is the api's.
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .staleWhileRevalidate(let maxAge):
      if let gone {
        if case .gone(_, let age) = gone, age > maxAge.seconds {
          background.start { _ = try? await fetch(call, codec, next, stored: nil) }
        }
        throw gone
      }
      guard let found else {
        return try await fetchOrFallBack(call, codec, next, stored: nil, gone: nil)
      }
      if found.isStale || found.answer.age > maxAge.seconds {
        background.start { _ = try? await fetch(call, codec, next, stored: found.answer) }
      }
      return found.answer
    }
  }

  /// The stored answer of `call` under a policy that shows it before asking the api
  /// (`cacheThenNetwork`), or nil: what `ServiceStack.answer(_:early:)` hands over first.
  public func stored<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>? {
    guard policy == .cacheThenNetwork, let codec = call.codec else { return nil }
    do { return try await read(call, codec)?.answer } catch LayerError.gone { return nil }
  }

  /// Asks below, offering the stored copy's validators; stores a new network answer (its rows
  /// together, in one transaction), or renews the copy on `NotModified`. A network failure with
  /// nothing stored falls back to the call's local query.
  func fetch<Value: Sendable>(
    _ call: ServiceCall<Value>, _ codec: CacheCodec<Value>, _ next: Next<Value>,
    stored: Answer<Value>?
  ) async throws -> Answer<Value> {
    let offered = stored.map(\.validators).flatMap { $0.isEmpty ? nil : $0 }
    do {
      let answer = try await next(offering: offered)
      // Something below answered from a cache of its own: keep its age, do not store it as new.
      guard answer.origin == .network else { return answer }
      let kept = try rows(for: call, codec, answer)
      await keep {
        try await store.store(kept)
        try await forgetLacking(call, kept: kept)
      }
      if let shape = call.entities, let asked = shape.itemID,
        let answered = try? shape.entities(of: answer.value).first?.id, answered != asked
      {
        throw LayerError.mismatch(
          what: call.summary, type: shape.type, asked: asked, answered: answered)
      }
      return answer
    } catch is NotModified {
      guard let stored else { throw LayerError.miss(what: call.summary) }
      await keep {
        try await store.renew(
          key(of: call), storedAt: clock.now(), validators: stored.validators)
      }
      return Answer(
        value: stored.value, origin: .cache, age: 0, validators: stored.validators)
    } catch let error where ServiceFailure.of(error) == .notFound {
      // The api says the entity an item call asks for does not exist: it leaves the store and
      // every stored list, unless an edit of it is pending (its write's answer decides).
      if let shape = call.entities, let asked = shape.itemID {
        await keep {
          _ = try await store.removeEntity(storeKey(shape.key(of: asked)), goneAt: clock.now())
        }
      }
      throw error
    }
  }

  /// After a complete list's answer (`LocalQuery.isComplete`), takes out of the store each
  /// stored entity its filters select that the answer lacks (`kept`): gone when the query has
  /// no filters (the answer was the whole type), else only no longer stored.
  private func forgetLacking<Value>(_ call: ServiceCall<Value>, kept: [CacheEntry]) async throws {
    guard let local = call.local, local.isComplete, let shape = call.entities,
      shape.itemID == nil
    else { return }
    let answered = Set(kept.lazy.filter { $0.scope == scope(of: shape) }.map(\.key))
    let selected = LocalQuery(filters: local.filters, summary: local.summary)
    let goneAt = local.filters.isEmpty ? clock.now() : nil
    for row in try await store.query(scope: scope(of: shape), selected)
    where !answered.contains(row.key) {
      _ = try await store.removeEntity(row.key, goneAt: goneAt)
    }
    if let goneAt {
      // Every entity of the type is stored: local queries of it say so (`Answer.isComplete`).
      try await store.store(
        CacheEntry(
          key: completeKey(shape.type), payload: Data(), storedAt: goneAt,
          references: kept.filter { $0.scope == scope(of: shape) }.map(\.key)))
    }
  }

  /// Before a changes feed of `type` is asked from the start: the type is not known to be
  /// complete until its last page is applied (`markComplete`), however the sync ends. The marker
  /// holds one key that is never stored, so it says "incomplete" until then.
  func markSyncing(type: String, at date: Date) async throws {
    try await store.store(
      CacheEntry(
        key: completeKey(type), payload: Data(), storedAt: date,
        references: [storeKey(type + "?syncing")]))
  }

  /// Says every entity of `type` there is is stored (`completeKey`): a changes feed of the type
  /// answered its last page, and a feed's entities, from the start, are all there are. After a
  /// sync from the start (`markSyncing`, perhaps stopped and resumed since), the marker holds
  /// every stored key of the type; after a later sync, the keys it held and those the feed
  /// `delivered`, but not those it deleted (`gone`). So an entity evicted to keep the budget
  /// still makes the store incomplete, until the next complete list. With no marker (lost to
  /// the budget during a sync), nothing is claimed.
  func markComplete(type: String, delivered: [String], gone: Set<String>, at date: Date)
    async throws
  {
    let key = completeKey(type)
    guard let marker = try await store.entry(for: key), let held = marker.references else {
      return
    }
    var keys: [String]
    if held.contains(storeKey(type + "?syncing")) {
      let all = LocalQuery(summary: "every stored \(type)")
      keys = try await store.query(scope: scope(ofType: type), all).map(\.key)
    } else {
      // A sync that changed nothing renews the marker's time, not its (long) list of keys.
      guard !delivered.isEmpty || !gone.isEmpty else {
        return try await store.renew(key, storedAt: date, validators: CacheValidators())
      }
      keys = held.filter { !gone.contains($0) }
    }
    var seen = Set(keys)
    for stored in delivered where seen.insert(stored).inserted { keys.append(stored) }
    try await store.store(CacheEntry(key: key, payload: Data(), storedAt: date, references: keys))
  }

  /// The store's key of `key` in this layer's partition.
  func storeKey(_ key: String) -> String { partition.isEmpty ? key : partition + " " + key }

  /// The store's key for `call`: the partition, a space, the call's own key.
  func key<Value>(of call: ServiceCall<Value>) -> String {
    partition.isEmpty ? call.key : partition + " " + call.key
  }

  /// Runs a write; a failure is a warning, never the caller's error: the answer is still good.
  private func keep(_ write: () async throws -> Void) async {
    do { try await write() } catch {
      warnings.warn("\(clause(error)); the answer is shown but was not kept.")
    }
  }

  /// `fetch`; when the api cannot be reached, the stored copy, the tombstone (`gone`) or the
  /// call's local query answers instead.
  private func fetchOrFallBack<Value: Sendable>(
    _ call: ServiceCall<Value>, _ codec: CacheCodec<Value>, _ next: Next<Value>,
    stored: Answer<Value>?, gone: LayerError?
  ) async throws -> Answer<Value> {
    do {
      return try await fetch(call, codec, next, stored: stored)
    } catch {
      guard Self.canFallBack(error) else { throw error }
      if let stored { return stored }
      if let gone { throw gone }
      // Never stored, and the api cannot answer: what the stored entities say, if the call
      // says how to ask them.
      if let local = try? await localAnswer(call) { return local }
      throw error
    }
  }

  /// Whether a failure below may be covered by the stored copy: unreachable or unavailable, not
  /// a refusal (4xx), bad data or cancellation.
  static func canFallBack(_ error: any Error) -> Bool {
    let failure = ServiceFailure.of(error)
    return failure == .unreachable || failure == .unavailable
  }
}

/// Passes each distinct warning on once: a run that fails to store ten answers for the same
/// reason says so in one line.
final class Warnings: Sendable {
  private let said = Mutex<Set<String>>([])
  private let output: @Sendable (String) -> Void

  init(_ output: @escaping @Sendable (String) -> Void) { self.output = output }

  func warn(_ message: String) {
    let first = said.withLock { $0.insert(message).inserted }
    if first { output(message) }
  }
}
