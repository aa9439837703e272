import Domain
import Foundation
import GRDB
import Layers

extension SQLiteCacheStore {
  /// The entities of `scope` a local query selects, in SQL: each field read by `json_extract`,
  /// with an index of the query's shape made the first time a query of that shape runs, so a
  /// query filters and orders by index rather than decoding every entity.
  public func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] {
    for field in query.fields where !LocalQuery.isField(field) {
      throw LayerError.notAField(field)
    }
    try await index(query.filters.map(\.field) + query.order.prefix(1).map(\.field), Self.extract)
    guard let (sql, statementArguments) = Self.select(scope: scope, query) else { return [] }
    let rows = try await using("read") {
      try writer().unsafeRead { db in
        try Row.fetchAll(db.cachedStatement(sql: sql), arguments: statementArguments)
      }
    }
    // A row another program damaged is left out, as a lookup leaves it out.
    return rows.compactMap { row in
      guard let key = StoredRow.text(row[CacheRecord.extra]),
        case .success(let entry) = StoredRow.entry(key: key, row)
      else { return nil }
      return entry
    }
  }

  /// The SELECT of a local query and its arguments; nil when nothing stored can match (a
  /// comparison with null, a list or an object, or with none of no values, as in the in-memory
  /// store).
  static func select(scope: String, _ query: LocalQuery) -> (String, StatementArguments)? {
    var sql = "SELECT \(CacheRecord.selection), key FROM cache_entry WHERE scope = ?"
    var arguments: [(any DatabaseValueConvertible)?] = [scope]
    for filter in query.filters {
      let field = extract(filter.field)
      // Text tests hold only for text: `json_extract` gives a number as a number.
      let text = "typeof(\(field)) = 'text'"
      switch filter.test {
      case .value(let comparison, let value):
        guard let bound = argument(value) else { return nil }
        arguments.append(bound)
        sql += " AND \(field) \(comparison.rawValue) ?"
      case .field(let comparison, let other):
        sql += " AND \(field) \(comparison.rawValue) \(extract(other))"
      case .oneOf(let values):
        let bound = values.compactMap(argument)
        guard !bound.isEmpty else { return nil }
        arguments += bound.map { $0 }
        sql +=
          " AND \(field) IN (\(Array(repeating: "?", count: bound.count).joined(separator: ", ")))"
      case .prefix(let start):
        arguments += [start, start]
        sql += " AND \(text) AND substr(\(field), 1, length(?)) = ?"
      case .contains(let part):
        arguments.append(part)
        sql += " AND \(text) AND instr(\(field), ?) > 0"
      case .isNull:
        sql += " AND \(field) IS NULL"
      }
    }
    if !query.order.isEmpty {
      sql +=
        " ORDER BY "
        + query.order.map { "\(extract($0.field)) \($0.descending ? "DESC" : "ASC")" }
        .joined(separator: ", ") + ", key"
    }
    if let limit = query.limit {
      sql += " LIMIT ?"
      arguments.append(max(0, limit))
    }
    return (sql, StatementArguments(arguments))
  }

  /// A filter's value as SQL binds it; nil for one that compares with nothing (null, a list,
  /// an object).
  private static func argument(_ value: JSONValue) -> (any DatabaseValueConvertible)? {
    switch value {
    case .integer(let number): number
    case .number(let number): number
    case .string(let text): text
    case .boolean(let flag): flag ? 1 : 0
    case .null, .array, .object: nil
    }
  }

  /// `field` of a stored entity's JSON, null for a payload that is not JSON (another program's
  /// damage): `json_extract` alone fails the whole query, and the making of its index, on one
  /// such row. Queries and their indexes use this one expression, so the index serves the query.
  static func extract(_ field: String) -> String {
    "json_extract(CASE WHEN json_valid(CAST(payload AS TEXT)) THEN CAST(payload AS TEXT) END,"
      + " '$.\(field)')"
  }

  /// The index a local query uses: the scope, each filter's field, then the first order's
  /// field, made once per process and shape (`cache_entity_json_year,rating` for movies of a
  /// year by rating). With it SQLite finds the filtered rows already in order and stops at the
  /// limit; with an index a field alone, it chose the order's index and read every entity
  /// of the scope: `store.local_query_100k` went from 80 ms to 0.3 ms a query. An index of an
  /// older Kernel's expression, which a damaged row could fail, is dropped.
  private func index(_ fields: [String], _ extract: (String) -> String) async throws {
    var shape: [String] = []
    for field in fields where !shape.contains(field) { shape.append(field) }
    guard !shape.isEmpty else { return }
    let name = "cache_entity_json_" + shape.joined(separator: ",")
    guard indexed.withLock({ !$0.contains(name) }) else { return }
    try await using("written") {
      try writer().write { db in
        for field in shape {
          let older = "cache_entity_by_" + field.replacingOccurrences(of: ".", with: "_")
          try db.execute(sql: #"DROP INDEX IF EXISTS "\#(older)""#)
        }
        try db.execute(
          sql: """
            CREATE INDEX IF NOT EXISTS "\(name)"
              ON cache_entry(scope, \(shape.map(extract).joined(separator: ", "))) WHERE scope IS NOT NULL
            """)
      }
    }
    indexed.withLock { _ = $0.insert(name) }
  }
}
