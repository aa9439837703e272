import Domain
import Foundation
import GRDB
import Layers

/// Reads a `cache_entry` or `outbox_write` row field by field, never trusting its types: a row
/// another program (or an older bug) wrote with a text `storedAt`, a time out of any plausible
/// range or a payload that is not a blob is a problem to report, never a trap (GRDB's subscript
/// traps on a value it cannot convert).
enum StoredRow {
  /// Why a row cannot be read.
  struct Problem: Error {
    let reason: String
  }

  /// Seconds since 1970 a stored time may have: from 1970 to the year 3000.
  static let plausibleSeconds: ClosedRange<Double> = 0...32_503_680_000

  /// The SQL condition under which `storedAt` reads as a time, for queries that aggregate it.
  static let readableTime =
    "typeof(storedAt) IN ('real', 'integer') AND storedAt BETWEEN 0 AND 32503680000"

  /// Whether `table` in `db` is not what Kernel made: a view in its place (a recursive one
  /// never ends), or any trigger or view over it, which another program added and a read could
  /// hang on or do anything through.
  static func isForeign(_ table: String, in db: Database) throws -> Bool {
    try Int.fetchOne(
      db,
      sql: """
        SELECT COUNT(*) FROM sqlite_master
        WHERE (name = ? AND type <> 'table') OR type = 'trigger'
          OR (type = 'view' AND sql LIKE '%' || ? || '%')
        """, arguments: [table, table]) ?? 0 > 0
  }

  /// The columns `entry(key:_:)` reads, in its order.
  static let columns =
    "payload, storedAt, etag, lastModified, usedAt, pending, scope, refs, original, stale"

  /// The entry of `row` (`columns`, or their first four), or why it cannot be had.
  static func entry(key: String, _ row: Row) -> Result<CacheEntry, Problem> {
    entry(key: key, columns: row.count) { row[$0] as DatabaseValue }
  }

  /// The entry of `statement`'s current row (`columns`, then anything), read straight from
  /// SQLite: GRDB's generic `row[i] as DatabaseValue`, unspecialized across the module, made
  /// assembling a 100-entity list 2.1x the C API's lookups (`store.list_assemble_100`).
  ///
  /// Safe: `DatabaseValue(sqliteStatement:index:)` copies the column's value out of SQLite,
  /// which holds it only while the statement stays on that row; it is called only between a
  /// cursor's `next()` that put the statement on a row and the next one, on the connection
  /// that runs it, for an index below the statement's column count (ASan: `StoreTests`).
  static func entry(key: String, current statement: Statement) -> Result<CacheEntry, Problem> {
    let pointer = statement.sqliteStatement
    return entry(key: key, columns: statement.columnCount) {
      DatabaseValue(sqliteStatement: pointer, index: CInt($0))
    }
  }

  /// The entry whose `columns` values `value` gives by position.
  private static func entry(
    key: String, columns count: Int, _ value: (Int) -> DatabaseValue
  ) -> Result<CacheEntry, Problem> {
    let payload = value(0)
    guard case .blob(let data) = payload.storage else {
      return .failure(Problem(reason: "its payload is \(kind(of: payload)), not data"))
    }
    let stored = value(1)
    guard let storedAt = date(stored) else {
      return .failure(
        Problem(reason: "its storedAt is \(kind(of: stored)), not a time since 1970"))
    }
    let references = count > 7 ? text(value(7)) : nil
    return .success(
      CacheEntry(
        key: key, payload: data, storedAt: storedAt,
        validators: CacheValidators(etag: text(value(2)), lastModified: text(value(3))),
        isPending: count > 5 && value(5) == true.databaseValue,
        scope: count > 6 ? text(value(6)) : nil,
        references: references.map { $0.isEmpty ? [] : $0.split(separator: "\n").map(String.init) },
        original: count > 8 ? self.data(value(8)) : nil,
        isStale: count > 9 && value(9) == true.databaseValue))
  }

  /// The time a stored value names, when it is a number within `plausibleSeconds`.
  static func date(_ value: DatabaseValue) -> Date? {
    let seconds: Double
    switch value.storage {
    case .double(let double): seconds = double
    case .int64(let integer): seconds = Double(integer)
    default: return nil
    }
    guard plausibleSeconds.contains(seconds) else { return nil }
    return Date(timeIntervalSince1970: seconds)
  }

  /// A count: an integer from 0 to `Int32.max`, or nothing when it is anything else.
  static func count(_ value: DatabaseValue) -> Int? {
    guard case .int64(let integer) = value.storage, (0...Int64(Int32.max)).contains(integer)
    else { return nil }
    return Int(integer)
  }

  /// Data: a blob, or nothing when it is anything else.
  static func data(_ value: DatabaseValue) -> Data? {
    if case .blob(let data) = value.storage { return data }
    return nil
  }

  /// Text, or nothing when it is anything else.
  static func text(_ value: DatabaseValue) -> String? {
    if case .string(let text) = value.storage { return text }
    return nil
  }

  /// `text "yesterday"`, `the number 1e+19`, `null`: what a bad value is, for the warning.
  static func kind(of value: DatabaseValue) -> String {
    switch value.storage {
    case .null: "null"
    case .int64(let integer): "the number \(integer)"
    case .double(let double): "the number \(double)"
    case .string(let text): "text \"\(text.prefix(40))\""
    case .blob(let data): "\(data.count) bytes of data"
    }
  }
}
