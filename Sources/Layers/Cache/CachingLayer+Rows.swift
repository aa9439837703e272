import Domain
import Foundation

/// Reading and keeping rows: the answer stored for a call, what its local query finds (complete
/// or not), the entities an answer holds read from their own rows, and the rows an answer is
/// kept as.
extension CachingLayer {
  /// A stored answer, and whether a write the api took has made it stale.
  struct Found<Value: Sendable>: Sendable {
    var answer: Answer<Value>
    var isStale: Bool
  }

  /// The answer stored for this very call (for an item call, its entity's row, whoever stored
  /// it; for a list of entities, its ids' current rows), or nil. A store that cannot be read, a
  /// copy that no longer decodes, or a list one of whose entities was evicted counts as nothing
  /// stored (with a warning), except under `cacheOnly`; an entity the api said does not exist
  /// (a tombstone, `CacheEntry.isGone`) throws `LayerError.gone`, and a list leaves it out.
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
      warnings.warn("\(clause(error)); asking the api instead.")
      return nil
    }
    guard let entry else { return nil }
    if entry.isGone {
      throw LayerError.gone(
        what: call.summary, age: max(0, clock.now().timeIntervalSince(entry.storedAt)))
    }
    do {
      let value: Value
      if let shape = call.entities, entry.references != nil {
        // Under `cacheOnly` a list answers with the rows that read, the others said once;
        // elsewhere a row that does not read makes the list a miss the api answers anew. A row
        // whose migration fails is one that does not read: never the whole list's failure.
        let payloads = await withHeld(
          rows.map { (try? shape.current($0.payload, storedAt: $0.modelVersion)) ?? $0.payload },
          shape)
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
        throw LayerError.unreadable(what: call.summary, reason: "\(error)")
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
    (try? await store.storedAtIfWhole(completeKey(shape.type))) ?? nil
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
  func scope<Value>(of shape: EntityShape<Value>) -> String { scope(ofType: shape.type) }

  /// The scope of the entities of `type` in this layer's partition: `<partition>|Movie`.
  func scope(ofType type: String) -> String { partition + "|" + type }

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
      // one asked is stored as that one (and the call refused, `LayerError.mismatch`), never as a
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
      storedAt: now, scope: scope(ofType: type),
      modelVersion: entity.held?.modelVersion ?? modelVersion,
      mergesFields: entity.held != nil || !whole)
  }
}
