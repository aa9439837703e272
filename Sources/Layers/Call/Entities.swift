import Domain
import Foundation

/// How a call's answer is made of entities (Apollo's normalized cache, Realm's objects by
/// primary key): each entity is stored once per partition, type and id, and an answer that
/// holds them is kept as their ids in order, so a fresher copy of an entity (an item read,
/// another list) shows in every stored answer that holds it.
///
/// ```swift
/// ServiceCall<Book>(name: "book", entity: .item(Book.self, id: 3), summary: "book 3")
/// ServiceCall<[Book]>(
///   name: "byAuthor", key: "books/byAuthor/le-guin", summary: "the books of Le Guin",
///   entities: .list(Book.self), local: LocalQuery(...))
/// ```
public struct EntityShape<Value: Sendable>: Sendable {
  /// The entities' type, as the store names it (`Book`).
  public let type: String
  /// For an item call: the id of the one entity it reads, whoever stored it.
  public let itemID: String?
  /// The version of the entity type's stored form (`StoredModel.modelVersion`; 1 for a type
  /// that declares none): what its rows are stored with.
  public var modelVersion: Int = 1
  /// Whether the answer's entities are whole: stored over a row of the entity, they replace it.
  /// When not (a list's entities, which may carry fewer fields than the item's), each is
  /// merged into the stored row field by field (a JSON Merge Patch, as Apollo's cache merges
  /// an object's fields), so a field the answer lacks keeps its stored value. An item answer is
  /// whole unless its call says otherwise: a field it lacks is one the api no longer has (Swift
  /// encodes a nil optional by leaving it out).
  public var isWhole: Bool
  /// The entities the type holds in its JSON (`StoredModel.heldEntities`): each stored in its
  /// own row as well, and read from there into every answer that holds it.
  public var held: [HeldEntity] = []
  let split: @Sendable (Value) throws -> [StoredEntity]
  let join: @Sendable ([Data]) throws -> Value
  /// A stored row's bytes of an older version made the current version's, by the type's
  /// migrations (`StoredModel.migrate`); nil for a type that declares none.
  var upgrade: (@Sendable (Data, _ from: Int) throws -> Data)?
  /// The key paths of the type's fields (`FieldNames`), or nil when they cannot be known.
  var fieldNames: @Sendable () -> Set<String>? = { nil }

  /// Whether the type declares migrations from its older versions (`StoredModel`).
  public var migrates: Bool { upgrade != nil }

  /// `payload`, stored at `version`, as the current version stores it: migrated when it is
  /// older and the type declares migrations, else as it is.
  public func current(_ payload: Data, storedAt version: Int) throws -> Data {
    guard version < modelVersion, let upgrade else { return payload }
    return try upgrade(payload, version)
  }

  /// The entities `value` holds, each with its id and its bytes, in order; after all of them,
  /// the entities they hold (`held`), to any depth, each with its own type.
  func entities(of value: Value) throws -> [StoredEntity] {
    let own = try split(value)
    guard !held.isEmpty else { return own }
    let decoder = JSONDecoder()
    return own
      + own.flatMap { entity in
        (try? decoder.decode(JSONValue.self, from: entity.payload))
          .map { HeldEntity.entities(in: $0, held) } ?? []
      }
  }

  /// The answer made of stored entities' bytes, in the order of its ids.
  public func value(of payloads: [Data]) throws -> Value { try join(payloads) }

  /// A list made of the stored entities that still read as the type, in order, and how many
  /// were left out (a row another program damaged, or one an older model wrote): one bad row
  /// never takes the others with it. Each row is tried on its own only when the whole does not
  /// read, so a sound list costs one decoding as before.
  public func readable(_ payloads: [Data]) throws -> (value: Value, leftOut: Int) {
    do {
      return (try join(payloads), 0)
    } catch {
      guard itemID == nil, payloads.count > 1 else { throw error }
      let sound = payloads.filter { (try? join([$0])) != nil }
      guard sound.count < payloads.count else { throw error }
      return (try join(sound), payloads.count - sound.count)
    }
  }

  /// How many of `entries`, stored rows of this type, are of a version it reads (its own, or an
  /// older one it migrates from) and still do not read as it: damaged by another program, or
  /// written by a model that changed without a new `StoredModel.modelVersion`. A row of a
  /// version it cannot read is `CacheStatistics.olderModelRows`' to count. Decodes each row.
  public func damaged(_ entries: [CacheEntry]) -> Int {
    entries.filter { entry in
      let version = entry.modelVersion
      guard version == modelVersion || (version < modelVersion && migrates) else { return false }
      return (try? join([current(entry.payload, storedAt: version)])) == nil
    }.count
  }

  /// The store key of entity `id` of this type: `Book/3`, under the layer's partition.
  public func key(of id: String) -> String { Self.key(type: type, id: id) }

  /// `Book/3`.
  public static func key(type: String, id: String) -> String { type + "/" + id }
}

/// One entity as the store keeps it: its id and its bytes (JSON, so a local query can read its
/// fields).
struct StoredEntity: Sendable, Hashable {
  /// Its id, as text.
  let id: String
  /// Its JSON.
  let payload: Data
  /// For an entity held in the answer's (`HeldEntity`): its own type and version; nil for the
  /// answer's own entities, of the shape's type.
  var held: Held?

  /// A held entity's type (`Supplier`) and the version its rows are stored with: one for every
  /// entity of a held field, so an entity carries a reference, not a copy (a list of 100,000
  /// movies held 3 MB more with a copy in each).
  final class Held: Sendable, Hashable {
    /// The type, as the store names it.
    let type: String
    /// Its `StoredModel.modelVersion`.
    let modelVersion: Int

    /// The held type `type`, stored at `modelVersion`.
    init(type: String, modelVersion: Int) {
      self.type = type
      self.modelVersion = modelVersion
    }

    static func == (a: Held, b: Held) -> Bool {
      a.type == b.type && a.modelVersion == b.modelVersion
    }

    func hash(into hasher: inout Hasher) {
      hasher.combine(type)
      hasher.combine(modelVersion)
    }
  }

  /// The entity `id` holding `payload`.
  init(id: String, payload: Data, held: Held? = nil) {
    self.id = id
    self.payload = payload
    self.held = held
  }
}

extension EntityShape {
  /// An item call's answer: the entity `type` with `id`, read from and stored to its own row.
  /// `whole: false` merges it into the stored row field by field (see `isWhole`).
  public static func item<E: Identifiable & Codable & Sendable>(
    _ entity: E.Type, id: E.ID, type: String? = nil, whole: Bool = true
  ) -> EntityShape<E> {
    let codec = CacheCodec<E>.json
    return EntityShape<E>(
      type: type ?? "\(E.self)", itemID: "\(id)", modelVersion: StoredModels.version(of: E.self),
      isWhole: whole, held: HeldEntity.declared(by: E.self),
      split: { value in [StoredEntity(id: "\(value.id)", payload: try codec.encode(value))] },
      join: { payloads in
        guard let only = payloads.first, payloads.count == 1 else {
          throw EntityMismatch(expected: 1, found: payloads.count)
        }
        return try codec.decode(only)
      }, upgrade: StoredModels.upgrade(of: E.self), fieldNames: { FieldNames.of(E.self) })
  }

  /// A list call's answer: entities of `type`, stored once each, the answer kept as their ids;
  /// each merged into its stored row field by field unless `whole` (see `isWhole`).
  /// One encoder for all its entities, and one decoding of their rows joined as one JSON array:
  /// a coder made for each entity was most of a 10-entity list's read.
  public static func list<E: Identifiable & Codable & Sendable>(
    _ entity: E.Type, type: String? = nil, whole: Bool = false
  ) -> EntityShape<[E]> {
    EntityShape<[E]>(
      type: type ?? "\(E.self)", itemID: nil, modelVersion: StoredModels.version(of: E.self),
      isWhole: whole, held: HeldEntity.declared(by: E.self),
      split: { values in
        let encoder = JSONEncoding.encoder()
        return try values.map { StoredEntity(id: "\($0.id)", payload: try encoder.encode($0)) }
      },
      join: { payloads in
        var array = Data("[".utf8)
        array.reserveCapacity(payloads.reduce(2) { $0 + $1.count + 1 })
        for (index, payload) in payloads.enumerated() {
          if index > 0 { array.append(UInt8(ascii: ",")) }
          array.append(payload)
        }
        array.append(UInt8(ascii: "]"))
        let entities = try JSONEncoding.decoder().decode([E].self, from: array)
        // A row is one entity: one holding a comma-joined pair is damage, not two.
        guard entities.count == payloads.count else {
          throw EntityMismatch(expected: payloads.count, found: entities.count)
        }
        return entities
      }, upgrade: StoredModels.upgrade(of: E.self), fieldNames: { FieldNames.of(E.self) })
  }

  /// Refuses `query` when it names a field the entity type does not have
  /// (`LayerError.unknownField`): a misspelled field is the app's mistake to be told of, not an
  /// empty answer. A type whose fields cannot be known (its own decoding refuses blank values) is
  /// not checked.
  public func check(_ query: LocalQuery) throws {
    guard let known = fieldNames() else { return }
    for field in query.fields where !known.contains(FieldNames.normalized(field)) {
      throw LayerError.unknownField(
        field: field, type: type, query: query.summary,
        known: known.filter { !$0.contains(".") }.sorted())
    }
  }
}

/// An answer's stored entities did not make one value of its type.
struct EntityMismatch: Error, CustomStringConvertible {
  let expected: Int
  let found: Int
  var description: String {
    "\(expected) stored \(expected == 1 ? "entity was" : "entities were") expected, \(found)"
      + " \(found == 1 ? "was" : "were") found"
  }
}

/// How an entity type is stored, where it is more than its JSON; each part has a default.
///
/// **Its version and migrations.** When its stored form changes between versions of the app
/// (a field added, renamed or retyped), its version now and how a row stored by each older
/// version becomes the next version's, as JSON — so an update keeps what is stored offline, as
/// a Realm `schemaVersion` with its `migrationBlock` does. Rows are stored with the version of
/// their type; a row of an older version is migrated each time it is read (item, list or local
/// query), until the api's answer stores it anew. A type that declares none is version 1.
///
/// **The entities it holds** in its JSON (a product's supplier, a movie's cast,
/// AlamofireCoreData's relationships): each one it holds is stored in its own row too, merged
/// field by field with what is stored of it, and every answer that holds it is read with that
/// row's copy — so a fresher supplier, stored by its own call or by another product's answer,
/// shows in every product that holds it, offline too. A held type may hold others in turn.
///
/// ```swift
/// extension Book: StoredModel {
///   static let modelVersion = 2  // 2 added `subtitle`
///   static func migrate(_ stored: inout JSONValue, from version: Int) throws {
///     if version == 1, case .object(var fields) = stored {
///       fields["subtitle"] = .string("")
///       stored = .object(fields)
///     }
///   }
/// }
/// extension Product: StoredModel {
///   static let heldEntities = [HeldEntity("supplier", Supplier.self)]
/// }
/// ```
public protocol StoredModel: Sendable {
  /// The version of the type's stored form now: 2 after its first change; 1 by default.
  static var modelVersion: Int { get }
  /// Makes `stored`, a row of version `version`, one of version `version + 1`. By default it
  /// throws: a row of a version with no migration is counted as from an older model, and a
  /// network profile stores it anew.
  static func migrate(_ stored: inout JSONValue, from version: Int) throws
  /// The entities the type's JSON holds, by the field that holds them; none by default.
  static var heldEntities: [HeldEntity] { get }
}

extension StoredModel {
  public static var modelVersion: Int { 1 }
  public static func migrate(_ stored: inout JSONValue, from version: Int) throws {
    throw NoMigration(type: "\(Self.self)", version: version)
  }
  public static var heldEntities: [HeldEntity] { [] }
}

/// A stored row of a version its type declares no migration from.
struct NoMigration: Error, CustomStringConvertible {
  let type: String
  let version: Int
  var description: String { "\(type) declares no migration from version \(version)" }
}

/// What an entity type declares of its stored form (`StoredModel`), for its shapes.
enum StoredModels {
  /// The type's version: its `modelVersion`, or 1.
  static func version<E>(of type: E.Type) -> Int {
    (type as? any StoredModel.Type)?.modelVersion ?? 1
  }

  /// The type's migrations run from a row's version to its current one; nil without any: a
  /// type of version 1, or one whose `migrate` is the default, which refuses every row (asked
  /// once, with a blank value, whether it answers `NoMigration`).
  static func upgrade<E>(of type: E.Type) -> (@Sendable (Data, Int) throws -> Data)? {
    guard let model = type as? any StoredModel.Type, model.modelVersion > 1 else { return nil }
    let current = model.modelVersion
    var blank = JSONValue.null
    do { try model.migrate(&blank, from: current - 1) } catch is NoMigration { return nil } catch {}
    return { payload, version in
      var value = try JSONDecoder().decode(JSONValue.self, from: payload)
      for step in max(1, version)..<max(max(1, version), current) {
        try model.migrate(&value, from: step)
      }
      return try JSONEncoder().encode(value)
    }
  }
}
