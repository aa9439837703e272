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

  /// The entry of `row` (`CacheRecord.selection`, and perhaps a column of the read's own after
  /// them), or why it cannot be had.
  static func entry(key: String, _ row: Row) -> Result<CacheEntry, Problem> {
    entry(key: key, columns: row.count) { row[$0] as DatabaseValue }
  }

  /// The entry of `statement`'s current row (`CacheRecord.selection`, then anything), read
  /// straight from SQLite: GRDB's generic `row[i] as DatabaseValue`, unspecialized across the
  /// module, made assembling a 100-entity list 2.1x the C API's lookups
  /// (`store.list_assemble_100`).
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

  /// The entry whose `CacheRecord.selection` values `value` gives by index; a column past
  /// `count` (not selected) reads as null.
  private static func entry(
    key: String, columns count: Int, _ value: (Int) -> DatabaseValue
  ) -> Result<CacheEntry, Problem> {
    func column(_ column: CacheRecord.Columns) -> DatabaseValue {
      column.index < count ? value(column.index) : .null
    }
    let payload = column(.payload)
    guard case .blob(let data) = payload.storage else {
      return .failure(Problem(reason: "its payload is \(kind(of: payload)), not data"))
    }
    let stored = column(.storedAt)
    guard let storedAt = date(stored) else {
      return .failure(
        Problem(reason: "its storedAt is \(kind(of: stored)), not a time since 1970"))
    }
    let references = text(column(.refs))
    return .success(
      CacheEntry(
        key: key, payload: data, storedAt: storedAt,
        validators: CacheValidators(
          etag: text(column(.etag)), lastModified: text(column(.lastModified))),
        isPending: column(.pending) == true.databaseValue,
        scope: text(column(.scope)),
        references: references.map { $0.isEmpty ? [] : $0.split(separator: "\n").map(String.init) },
        original: self.data(column(.original)),
        isStale: column(.stale) == true.databaseValue,
        isGone: column(.gone) == true.databaseValue,
        modelVersion: Self.count(column(.version)) ?? 1))
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

/// A `cache_entry` row as GRDB's records name it: its table and its columns. A read selects
/// `selection` (these columns, in this order) and may add one of its own after them
/// (`extra`: a local query's key, a list read's position); `StoredRow.entry` reads them by name,
/// at the index the order gives.
enum CacheRecord: TableRecord {
  static let databaseTableName = "cache_entry"

  /// The columns an entry is read from (`SQLiteCacheStore.migrator` makes them).
  enum Columns: Int, CaseIterable, ColumnExpression {
    case payload, storedAt, etag, lastModified, usedAt, pending, scope, refs, original, stale, gone
    case version
    var name: String { "\(self)" }
    /// The column's index in `selection`.
    var index: Int { rawValue }
  }

  /// `payload, storedAt, …, version`: what a read of entries selects.
  static let selection = Columns.allCases.map(\.name).joined(separator: ", ")
  /// The index of the column a read adds after `selection`.
  static let extra = Columns.allCases.count
}
