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
    var gone: EntityGone?
    let found: Found<Value>?
    do { found = try await read(call, codec) } catch let error as EntityGone {
      (found, gone) = (nil, error)
    }
    let stored = found?.answer
    switch policy {
    case .cacheOnly:
      if let stored { return stored }
      if let gone { throw gone }
      if let local = try await localAnswer(call) { return local }
      throw CacheMiss(what: call.summary)
    case .networkOnly:
      return try await fetch(call, codec, next, stored: nil)
    case .cacheFirst(let maxAge):
      if let found, !found.isStale, found.answer.age <= maxAge.seconds { return found.answer }
      if let gone, gone.age <= maxAge.seconds { throw gone }
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .networkFirst:
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .cacheThenNetwork:
      // The stored copy was there to be shown first (`stored(_:)`); the answer is the api's.
      return try await fetchOrFallBack(call, codec, next, stored: stored, gone: gone)
    case .staleWhileRevalidate(let maxAge):
      if let gone {
        if gone.age > maxAge.seconds {
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
    do { return try await read(call, codec)?.answer } catch is EntityGone { return nil }
  }

  // MARK: The store

  /// A stored answer, and whether a write the api took has made it stale.
  struct Found<Value: Sendable>: Sendable {
    var answer: Answer<Value>
    var isStale: Bool
  }

  /// The answer stored for this very call (for an item call, its entity's row, whoever stored
  /// it; for a list of entities, its ids' current rows), or nil. A store that cannot be read, a
  /// copy that no longer decodes, or a list one of whose entities was evicted counts as nothing
  /// stored (with a warning), except under `cacheOnly`; an entity the api said does not exist
  /// (a tombstone, `CacheEntry.isGone`) throws `EntityGone`, and a list leaves it out.
  func read<Value: Sendable>(_ call: ServiceCall<Value>, _ codec: CacheCodec<Value>) async throws
    -> Found<Value>?
  {
    let entry: CacheEntry?
    var rows: [CacheEntry] = []
    do {
      entry = try await store.entry(for: key(of: call))
      if let references = entry?.references {
        let found = try await store.entries(for: references)
        // An entity evicted since: the list is a miss, never a list with holes.
        guard !found.contains(where: { $0 == nil }) else { return nil }
        rows = found.compactMap { $0 }.filter { !$0.isGone }
      }
    } catch {
      if policy == .cacheOnly { throw error }
      warnings.warn("\(Self.clause(error)); asking the api instead.")
      return nil
    }
    guard let entry else { return nil }
    if entry.isGone {
      throw EntityGone(
        what: call.summary, age: max(0, clock.now().timeIntervalSince(entry.storedAt)))
    }
    do {
      let value: Value
      if let shape = call.entities, entry.references != nil {
        // Under `cacheOnly` a list answers with the rows that read, the others said once;
        // elsewhere a row that does not read makes the list a miss the api answers anew.
        let payloads = await withHeld(
          try rows.map { try shape.current($0.payload, storedAt: $0.modelVersion) }, shape)
        if policy == .cacheOnly {
          let (readable, leftOut) = try shape.readable(payloads)
          warnLeftOut(leftOut, shape, call)
          value = readable
        } else {
          value = try shape.value(of: payloads)
        }
      } else if let shape = call.entities, shape.itemID != nil {
        value = try shape.value(
          of: await withHeld([shape.current(entry.payload, storedAt: entry.modelVersion)], shape))
      } else {
        value = try codec.decode(entry.payload)
      }
      let pending = entry.isPending || rows.contains(where: \.isPending)
      return Found(
        answer: Answer(
          value: value, origin: pending ? .pending : .cache,
          age: max(0, clock.now().timeIntervalSince(entry.storedAt)),
          validators: pending ? CacheValidators() : entry.validators),
        isStale: entry.isStale || rows.contains(where: \.isStale))
    } catch {
      if policy == .cacheOnly {
        throw CacheUnreadable(what: call.summary, reason: "\(error)")
      }
      warnings.warn("The cached copy of \(call.summary) could not be read; asking the api instead.")
      return nil
    }
  }

  /// What the call's local query selects among the stored entities of its type (origin
  /// `local`: the api may know more; `pending` when an entity in it shows a write not yet
  /// sent), or nil when it declares none or nothing readable matches. An entity that no longer
  /// reads as its type is left out, and said once.
  func localAnswer<Value: Sendable>(_ call: ServiceCall<Value>) async throws -> Answer<Value>? {
    guard let local = call.local, let shape = call.entities, shape.itemID == nil else {
      return nil
    }
    let rows = try await store.query(scope: scope(of: shape), local)
    let completeAt = await completeness(of: shape)
    // Nothing found among every entity there is: the answer is that there is none.
    guard !rows.isEmpty || completeAt != nil else { return nil }
    let payloads = await withHeld(
      rows.map { (try? shape.current($0.payload, storedAt: $0.modelVersion)) ?? $0.payload },
      shape)
    let (value, leftOut) = try shape.readable(payloads)
    warnLeftOut(leftOut, shape, call)
    guard leftOut < rows.count || (rows.isEmpty && completeAt != nil) else { return nil }
    let now = clock.now()
    var answer = Answer(
      value: value, origin: rows.contains(where: \.isPending) ? .pending : .local,
      age: rows.map { max(0, now.timeIntervalSince($0.storedAt)) }.max() ?? 0)
    if let completeAt, leftOut == 0 {
      answer.isComplete = true
      answer.age = max(0, now.timeIntervalSince(completeAt))
    }
    return answer
  }

  /// The key of the row that says every entity of `type` there is is stored in this partition:
  /// the last complete list of the whole type (`LocalQuery.isComplete` with no filters), kept
  /// as its entities' keys.
  func completeKey(_ type: String) -> String { storeKey(type + "?complete") }

  /// When a complete list of the whole of `shape`'s type last answered, if every entity it
  /// held is still stored (removed ones leave it as they leave every list; one evicted to keep
  /// the budget makes the store incomplete); else nil.
  private func completeness<Value>(of shape: EntityShape<Value>) async -> Date? {
    guard let marker = try? await store.entry(for: completeKey(shape.type)),
      let keys = marker.references,
      let rows = try? await store.entries(for: keys), !rows.contains(where: { $0 == nil })
    else { return nil }
    return marker.storedAt
  }

  /// Says once that `leftOut` stored entities did not read as their type (damaged, or stored
  /// by an older model with no migration for it) and were left out of `call`'s answer.
  private func warnLeftOut<Value>(
    _ leftOut: Int, _ shape: EntityShape<Value>, _ call: ServiceCall<Value>
  ) {
    guard leftOut > 0 else { return }
    warnings.warn(
      "\(leftOut) stored \(shape.type) \(leftOut == 1 ? "entity does" : "entities do") not read"
        + " as \(shape.type) any more and \(leftOut == 1 ? "was" : "were") left out of"
        + " \(call.summary).")
  }

  /// `payloads` of `shape`'s entities with each entity they hold (`HeldEntity`) read from its
  /// own row, where it has one: the freshest copy, whichever answer stored it. A row that is
  /// not JSON stays as it is.
  func withHeld<Value>(_ payloads: [Data], _ shape: EntityShape<Value>) async -> [Data] {
    guard !shape.held.isEmpty else { return payloads }
    let values = payloads.map { try? JSONDecoder().decode(JSONValue.self, from: $0) }
    let read = await HeldEntity.reading(values.compactMap { $0 }, shape.held) { field, ids in
      let keys = ids.map { storeKey(EntityShape<Never>.key(type: field.type, id: $0)) }
      let rows = (try? await store.entries(for: keys)) ?? []
      var found: [String: JSONValue] = [:]
      for (id, row) in zip(ids, rows) {
        guard let row, !row.isGone, row.scope != nil, let value = field.current(row) else {
          continue
        }
        found[id] = value
      }
      return found
    }
    var fresh = read.makeIterator()
    let encoder = JSONEncoder()
    return zip(payloads, values).map { payload, value in
      guard value != nil, let next = fresh.next(), let data = try? encoder.encode(next) else {
        return payload
      }
      return data
    }
  }

  /// The scope of `shape`'s entities in this partition: what a local query looks among.
  func scope<Value>(of shape: EntityShape<Value>) -> String { partition + "|" + shape.type }

  /// The rows that keep `answer` of `call`: its entities once each (an item call's is the
  /// answer itself), and for a list the answer as their keys; else the answer whole.
  func rows<Value: Sendable>(
    for call: ServiceCall<Value>, _ codec: CacheCodec<Value>, _ answer: Answer<Value>
  ) throws -> [CacheEntry] {
    let now = clock.now()
    guard let shape = call.entities else {
      return [
        CacheEntry(
          key: key(of: call), payload: try codec.encode(answer.value), storedAt: now,
          validators: answer.validators)
      ]
    }
    let isItem = shape.itemID != nil
    // The answer's own entities come first, then those they hold (`EntityShape.entities`).
    var own = 0
    let entities = try shape.entities(of: answer.value).map { entity in
      if entity.held == nil { own += 1 }
      // Every entity under the id it carries: an item answer naming another entity than the
      // one asked is stored as that one (and the call refused, `ItemMismatch`), never as a
      // second copy under the id asked. An entity's validators are those of its own item
      // answer, never a list's; one it holds is merged into its own row.
      var row = self.row(
        of: entity, type: shape.type, modelVersion: shape.modelVersion, whole: shape.isWhole,
        at: now)
      if isItem, entity.held == nil { row.validators = answer.validators }
      return row
    }
    if isItem { return entities }
    return entities + [
      CacheEntry(
        key: key(of: call), payload: Data(), storedAt: now, validators: answer.validators,
        references: entities.prefix(own).map(\.key))
    ]
  }

  /// The row that stores `entity`: of `type` at `modelVersion`, merged into its stored row
  /// field by field unless `whole`; or held by one of them, and then always merged.
  func row(
    of entity: StoredEntity, type: String, modelVersion: Int, whole: Bool, at now: Date
  ) -> CacheEntry {
    let type = entity.held?.type ?? type
    return CacheEntry(
      key: storeKey(EntityShape<Never>.key(type: type, id: entity.id)), payload: entity.payload,
      storedAt: now, scope: partition + "|" + type,
      modelVersion: entity.held?.modelVersion ?? modelVersion,
      mergesFields: entity.held != nil || !whole)
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
        throw ItemMismatch(what: call.summary, type: shape.type, asked: asked, answered: answered)
      }
      return answer
    } catch is NotModified {
      guard let stored else { throw CacheMiss(what: call.summary) }
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

  /// The store's key of `key` in this layer's partition.
  func storeKey(_ key: String) -> String { partition.isEmpty ? key : partition + " " + key }

  /// The store's key for `call`: the partition, a space, the call's own key.
  func key<Value>(of call: ServiceCall<Value>) -> String {
    partition.isEmpty ? call.key : partition + " " + call.key
  }

  /// Runs a write; a failure is a warning, never the caller's error: the answer is still good.
  private func keep(_ write: () async throws -> Void) async {
    do { try await write() } catch {
      warnings.warn("\(Self.clause(error)); the answer is shown but was not kept.")
    }
  }

  /// `fetch`; when the api cannot be reached, the stored copy, the tombstone (`gone`) or the
  /// call's local query answers instead.
  private func fetchOrFallBack<Value: Sendable>(
    _ call: ServiceCall<Value>, _ codec: CacheCodec<Value>, _ next: Next<Value>,
    stored: Answer<Value>?, gone: EntityGone?
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

  /// An error's sentence without its full stop, to go on with.
  static func clause(_ error: any Error) -> String {
    var text = "\(error)"
    while text.hasSuffix(".") { text.removeLast() }
    return text
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
