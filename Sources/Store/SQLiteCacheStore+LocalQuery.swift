import Domain
import Foundation
import GRDB
import Layers

extension SQLiteCacheStore {
  /// The entities of `scope` a local query selects, in SQL: each field read by `json_extract`,
  /// with an index on the scope and the field made the first time a query asks for it, so a
  /// query filters by index rather than decoding every entity.
  public func query(scope: String, _ query: LocalQuery) async throws -> [CacheEntry] {
    for field in query.fields where !LocalQuery.isField(field) {
      throw LocalQueryRefused(field: field)
    }
    let extract = Self.extract
    try await index(query.filters.map(\.field) + query.order.prefix(1).map(\.field), extract)
    var sql = "SELECT \(CacheRecord.selection), key FROM cache_entry WHERE scope = ?"
    var arguments: [(any DatabaseValueConvertible)?] = [scope]
    for filter in query.filters {
      switch filter.value {
      case .integer(let number):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(number)
      case .number(let number):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(number)
      case .string(let text):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(text)
      case .boolean(let flag):
        sql += " AND \(extract(filter.field)) = ?"
        arguments.append(flag ? 1 : 0)
      case .null, .array, .object:
        // Nothing stored equals null, a list or an object (as in the in-memory store).
        return []
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
    let statementArguments = StatementArguments(arguments)
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

  /// `field` of a stored entity's JSON, null for a payload that is not JSON (another program's
  /// damage): `json_extract` alone fails the whole query, and the making of its index, on one
  /// such row. Queries and their indexes use this one expression, so the index serves the query.
  static func extract(_ field: String) -> String {
    "json_extract(CASE WHEN json_valid(CAST(payload AS TEXT)) THEN CAST(payload AS TEXT) END,"
      + " '$.\(field)')"
  }

  /// The indexes a local query on `fields` uses, made once per process and field (an index of
  /// an older Kernel's expression, which a damaged row could fail, is dropped).
  private func index(_ fields: [String], _ extract: (String) -> String) async throws {
    let missing = fields.filter { field in indexed.withLock { !$0.contains(field) } }
    guard !missing.isEmpty else { return }
    try await using("written") {
      try writer().write { db in
        for field in missing {
          let name = field.replacingOccurrences(of: ".", with: "_")
          try db.execute(
            sql: """
              DROP INDEX IF EXISTS "cache_entity_by_\(name)";
              CREATE INDEX IF NOT EXISTS "cache_entity_json_\(name)"
                ON cache_entry(scope, \(extract(field))) WHERE scope IS NOT NULL
              """)
        }
      }
    }
    indexed.withLock { $0.formUnion(missing) }
  }
}
