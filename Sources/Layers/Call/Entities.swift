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
  let split: @Sendable (Value) throws -> [StoredEntity]
  let join: @Sendable ([Data]) throws -> Value
  /// A stored row's bytes of an older version made the current version's, by the type's
  /// migrations (`StoredModel.migrate`); nil for a type that declares none.
  var upgrade: (@Sendable (Data, _ from: Int) throws -> Data)?

  /// `payload`, stored at `version`, as the current version stores it: migrated when it is
  /// older and the type declares migrations, else as it is.
  public func current(_ payload: Data, storedAt version: Int) throws -> Data {
    guard version < modelVersion, let upgrade else { return payload }
    return try upgrade(payload, version)
  }

  /// The entities `value` holds, each with its id and its bytes, in order.
  public func entities(of value: Value) throws -> [StoredEntity] { try split(value) }

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

  /// The store key of entity `id` of this type: `Book/3`, under the layer's partition.
  public func key(of id: String) -> String { Self.key(type: type, id: id) }

  /// `Book/3`.
  public static func key(type: String, id: String) -> String { type + "/" + id }
}

/// One entity as the store keeps it: its id and its bytes (JSON, so a local query can read its
/// fields).
public struct StoredEntity: Sendable, Hashable {
  /// Its id, as text.
  public let id: String
  /// Its JSON.
  public let payload: Data

  /// The entity `id` holding `payload`.
  public init(id: String, payload: Data) {
    self.id = id
    self.payload = payload
  }
}

extension EntityShape {
  /// An item call's answer: the entity `type` with `id`, read from and stored to its own row.
  public static func item<E: Identifiable & Codable & Sendable>(
    _ entity: E.Type, id: E.ID, type: String? = nil
  ) -> EntityShape<E> {
    let codec = CacheCodec<E>.json
    return EntityShape<E>(
      type: type ?? "\(E.self)", itemID: "\(id)", modelVersion: StoredModels.version(of: E.self),
      split: { value in [StoredEntity(id: "\(value.id)", payload: try codec.encode(value))] },
      join: { payloads in
        guard let only = payloads.first, payloads.count == 1 else {
          throw EntityMismatch(expected: 1, found: payloads.count)
        }
        return try codec.decode(only)
      }, upgrade: StoredModels.upgrade(of: E.self))
  }

  /// A list call's answer: entities of `type`, stored once each, the answer kept as their ids.
  /// One encoder for all its entities, and one decoding of their rows joined as one JSON array:
  /// a coder made for each entity was most of a 10-entity list's read.
  public static func list<E: Identifiable & Codable & Sendable>(
    _ entity: E.Type, type: String? = nil
  ) -> EntityShape<[E]> {
    EntityShape<[E]>(
      type: type ?? "\(E.self)", itemID: nil, modelVersion: StoredModels.version(of: E.self),
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
      }, upgrade: StoredModels.upgrade(of: E.self))
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

/// An entity type whose stored form changed between versions of the app (a field added,
/// renamed or retyped): its version now, and how a row stored by each older version becomes
/// the next version's, as JSON — so an update keeps what is stored offline, as a Realm
/// `schemaVersion` with its `migrationBlock` does. Rows are stored with the version of their
/// type; a row of an older version is migrated each time it is read (item, list or local
/// query), until the api's answer stores it anew. A type that declares nothing is version 1.
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
/// ```
public protocol StoredModel: Sendable {
  /// The version of the type's stored form now: 2 after its first change.
  static var modelVersion: Int { get }
  /// Makes `stored`, a row of version `version`, one of version `version + 1`.
  static func migrate(_ stored: inout JSONValue, from version: Int) throws
}

/// What an entity type declares of its stored form (`StoredModel`), for its shapes.
enum StoredModels {
  /// The type's version: its `modelVersion`, or 1.
  static func version<E>(of type: E.Type) -> Int {
    (type as? any StoredModel.Type)?.modelVersion ?? 1
  }

  /// The type's migrations run from a row's version to its current one; nil without any.
  static func upgrade<E>(of type: E.Type) -> (@Sendable (Data, Int) throws -> Data)? {
    guard let model = type as? any StoredModel.Type else { return nil }
    let current = model.modelVersion
    return { payload, version in
      var value = try JSONDecoder().decode(JSONValue.self, from: payload)
      for step in max(1, version)..<max(max(1, version), current) {
        try model.migrate(&value, from: step)
      }
      return try JSONEncoder().encode(value)
    }
  }
}

/// How the store answers a list call that was never stored: filters, an order and a limit over
/// the stored entities of its type (Realm's `realm.objects(Book.self).filter("year == 1969")`,
/// sorted by title). Run in the store (SQL for SQLite), never by decoding every
/// entity. Fields are key paths into the entity's JSON as stored (`year`, `cast.0.name`): the
/// names its `Codable` encoding writes, its Swift property names unless its coding keys say
/// otherwise, not the api's. Every filter must hold — an equality or a comparison against a
/// value or another field, one of several values, a text prefix or part, null — and the limit
/// applies to what the filters select, in the order:
///
/// ```swift
/// LocalQuery(
///   filters: [.init("category", equals: 3), .init("count", .less, field: "reorderLevel")],
///   order: [.init("count")], limit: 10, summary: "products to reorder")
/// ```
public struct LocalQuery: Sendable, Hashable {
  /// How a filter compares a field with a value or another field, as SQL does: a number with a
  /// number, text with text (by its bytes); null never compares, so it matches nothing.
  public enum Comparison: String, Sendable, Hashable, CaseIterable {
    /// `=`.
    case equal = "="
    /// `≠`.
    case notEqual = "<>"
    /// `<`.
    case less = "<"
    /// `≤`.
    case lessOrEqual = "<="
    /// `>`.
    case greater = ">"
    /// `≥`.
    case greaterOrEqual = ">="

    /// Whether SQLite's order of two values (`LocalQuery.compare`'s -1, 0 or 1) satisfies it.
    func holds(_ order: Int) -> Bool {
      switch self {
      case .equal: order == 0
      case .notEqual: order != 0
      case .less: order < 0
      case .lessOrEqual: order <= 0
      case .greater: order > 0
      case .greaterOrEqual: order >= 0
      }
    }
  }

  /// One condition on a field of the entity, every one of them.
  public struct Filter: Sendable, Hashable {
    /// What the field is tested against.
    public enum Test: Sendable, Hashable {
      /// The field compared with a value (null, a list or an object matches nothing).
      case value(Comparison, JSONValue)
      /// The field compared with another field of the same entity (`count < reorderLevel`).
      case field(Comparison, String)
      /// The field equals one of these values.
      case oneOf([JSONValue])
      /// The field is text starting with this.
      case prefix(String)
      /// The field is text holding this.
      case contains(String)
      /// The field is null or missing.
      case isNull
    }

    /// A key path into the entity's JSON (`year`).
    public let field: String
    /// What it is tested against.
    public let test: Test

    /// Entities whose `field` passes `test`.
    public init(_ field: String, _ test: Test) {
      self.field = field
      self.test = test
    }

    /// Entities whose `field` equals `value`.
    public init(_ field: String, equals value: JSONValue) {
      self.init(field, .value(.equal, value))
    }

    /// Entities whose `field` compares with `value` as `comparison` says (`count < 5`).
    public init(_ field: String, _ comparison: Comparison, _ value: JSONValue) {
      self.init(field, .value(comparison, value))
    }

    /// Entities whose `field` compares with their own `other` field (`count < reorderLevel`).
    public init(_ field: String, _ comparison: Comparison, field other: String) {
      self.init(field, .field(comparison, other))
    }

    /// The fields it reads: its own, and the other field it compares with.
    var fields: [String] {
      if case .field(_, let other) = test { return [field, other] }
      return [field]
    }

    /// Whether an entity's JSON passes it, as SQLite's query does (`SQLiteCacheStore.select`):
    /// what the in-memory twin runs.
    func holds(for entity: JSONValue?) -> Bool {
      let stored = entity?[LocalQuery.path(field)]
      switch test {
      case .value(let comparison, let value):
        return LocalQuery.comparable(stored) && LocalQuery.comparable(value)
          && comparison.holds(LocalQuery.compare(stored, value))
      case .field(let comparison, let other):
        let theirs = entity?[LocalQuery.path(other)]
        return LocalQuery.comparable(stored) && LocalQuery.comparable(theirs)
          && comparison.holds(LocalQuery.compare(stored, theirs))
      case .oneOf(let values):
        return LocalQuery.comparable(stored)
          && values.contains { LocalQuery.comparable($0) && LocalQuery.compare(stored, $0) == 0 }
      case .prefix(let start):
        guard case .string(let text)? = stored else { return false }
        return text.utf8.starts(with: start.utf8)
      case .contains(let part):
        guard case .string(let text)? = stored else { return false }
        return part.isEmpty || text.utf8.firstRange(of: part.utf8) != nil
      case .isNull:
        return stored == nil || stored == .null
      }
    }
  }

  /// By `field`, highest first when `descending`.
  public struct Order: Sendable, Hashable {
    /// A key path into the entity's JSON.
    public let field: String
    /// Highest first.
    public let descending: Bool
    /// By `field`, lowest first unless `descending`.
    public init(_ field: String, descending: Bool = false) {
      self.field = field
      self.descending = descending
    }
  }

  /// Every one must hold.
  public var filters: [Filter]
  /// The order, by the first then the next (ties by key).
  public var order: [Order]
  /// At most this many; nil for all.
  public var limit: Int?
  /// What it answers, for people: `stored books of 1969, by title`.
  public var summary: String
  /// Whether the call's answer from the api is every entity of its type its filters select (a
  /// complete list: all of them, every page): after such an answer, a stored entity its filters
  /// select that the answer lacks is taken out of the store (`CacheStore.removeEntity`), as
  /// gone when the query has no filters (the answer was the whole type).
  public var isComplete: Bool

  /// A query of these parts, said as `summary`; `complete` when the call's answer from the api
  /// is every entity the filters select (see `isComplete`).
  public init(
    filters: [Filter] = [], order: [Order] = [], limit: Int? = nil, summary: String,
    complete: Bool = false
  ) {
    self.filters = filters
    self.order = order
    self.limit = limit
    self.summary = summary
    self.isComplete = complete
  }

  /// Whether `field` is a key path a store may put in a query: letters, digits and `_`, in
  /// levels joined by `.`; anything else is refused before it reaches SQL.
  public static func isField(_ field: String) -> Bool {
    let levels = field.split(separator: ".", omittingEmptySubsequences: false)
    return !levels.isEmpty
      && levels.allSatisfy { level in
        !level.isEmpty
          && level.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte)
              || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "_")
          }
      }
  }

  /// The query's fields, each checked by `isField` before a store runs it.
  public var fields: [String] { filters.flatMap(\.fields) + order.map(\.field) }

  /// The levels of a key path (`cast.0.name`).
  static func path(_ field: String) -> [String] { field.split(separator: ".").map(String.init) }

  /// Whether a value takes part in a comparison, as in SQL: a number, a flag or text; null, a
  /// missing field, a list and an object never compare.
  static func comparable(_ value: JSONValue?) -> Bool {
    switch value {
    case .integer?, .number?, .boolean?, .string?: true
    case nil, .null?, .array?, .object?: false
    }
  }

  /// SQLite's order of the values `json_extract` gives: null, then numbers, then text, then
  /// anything else; -1, 0 or 1.
  static func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
    func rank(_ value: JSONValue?) -> (Int, Double, String) {
      switch value {
      case nil, .null?: (0, 0, "")
      case .integer(let number)?: (1, Double(number), "")
      case .number(let number)?: (1, number, "")
      case .boolean(let flag)?: (1, flag ? 1 : 0, "")
      case .string(let text)?: (2, 0, text)
      case .array?, .object?: (3, 0, "")
      }
    }
    let (x, y) = (rank(a), rank(b))
    if x.0 != y.0 { return x.0 < y.0 ? -1 : 1 }
    if x.1 != y.1 { return x.1 < y.1 ? -1 : 1 }
    if x.2 != y.2 { return x.2 < y.2 ? -1 : 1 }
    return 0
  }
}

/// A local query whose fields are not key paths: a mistake in the app's call description.
public struct LocalQueryRefused: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The field that is not a key path.
  public let field: String
  /// A refusal of `field`.
  public init(field: String) { self.field = field }
  /// A configuration failure (exit 78): the call description is wrong.
  public var failure: ServiceFailure { .configuration }
  public var description: String {
    "The local query's field \"\(field.prefix(60))\" is not a key path (letters, digits and _ in"
      + " levels joined by .); fix the call's description."
  }
}
