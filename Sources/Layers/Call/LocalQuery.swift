import Domain
import Foundation

/// How the store answers a list call that was never stored: filters, an order and a limit over
/// the stored entities of its type (Realm's `realm.objects(Book.self).filter("year == 1969")`,
/// sorted by title). Run in the store (SQL for SQLite), never by decoding every
/// entity. Fields are key paths into the entity's JSON as stored (`year`, `cast.0.name`): the
/// names its `Codable` encoding writes, its Swift property names unless its coding keys say
/// otherwise, not the api's; checked against the type before a call runs (`EntityShape.check`).
/// Every filter must hold — an equality or a comparison against a
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

extension LocalQuery.Filter {
  /// Entities whose field at `keyPath` passes `test`: the field its coding key names
  /// (`\Product.reorderLevel`: `reorderLevel`, or `reorder_level` if its coding keys say so), so
  /// a misspelled field does not compile. A key path to a list or an object names no field, and
  /// the query is refused when it runs (`LayerError.unknownField`).
  public init<Root: Decodable, Field>(_ keyPath: KeyPath<Root, Field>, _ test: Test) {
    self.init(LocalQuery.field(keyPath), test)
  }

  /// Entities whose field at `keyPath` equals `value`.
  public init<Root: Decodable, Field>(_ keyPath: KeyPath<Root, Field>, equals value: JSONValue) {
    self.init(LocalQuery.field(keyPath), equals: value)
  }

  /// Entities whose field at `keyPath` compares with `value` as `comparison` says.
  public init<Root: Decodable, Field>(
    _ keyPath: KeyPath<Root, Field>, _ comparison: LocalQuery.Comparison, _ value: JSONValue
  ) {
    self.init(LocalQuery.field(keyPath), comparison, value)
  }

  /// Entities whose field at `keyPath` compares with their own field at `other`
  /// (`\.count < \.reorderLevel`).
  public init<Root: Decodable, Field, Other>(
    _ keyPath: KeyPath<Root, Field>, _ comparison: LocalQuery.Comparison,
    field other: KeyPath<Root, Other>
  ) {
    self.init(LocalQuery.field(keyPath), comparison, field: LocalQuery.field(other))
  }
}

extension LocalQuery.Order {
  /// By the field at `keyPath` (its coding key), lowest first unless `descending`.
  public init<Root: Decodable, Field>(_ keyPath: KeyPath<Root, Field>, descending: Bool = false) {
    self.init(LocalQuery.field(keyPath), descending: descending)
  }
}

extension LocalQuery {
  /// The field `keyPath` reads, as the JSON names it (`FieldNames.name(of:)`); the key path's
  /// own text when it names none, which no entity type has.
  static func field<Root: Decodable, Field>(_ keyPath: KeyPath<Root, Field>) -> String {
    FieldNames.name(of: keyPath) ?? "\(keyPath)"
  }
}
