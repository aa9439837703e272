import Domain
import Foundation
import GRDB
import GRDBSQLite
import Layers
import Synchronization

/// A connection that only reads entries, on the C API: opened on a file that already exists and
/// already holds every migration this build knows, so it runs no journal-mode pragma, no
/// migrator, and builds no GRDB queue (a dispatch queue, functions, collations, observers).
/// A command that only reads the cache (`--profile offline`) opens nothing else. The file is
/// opened for reading and writing but the connection is `query_only`: as the last one to close
/// it checkpoints and removes the WAL files, as any connection would, where a read-only one
/// would leave them behind.
final class LookupConnection: @unchecked Sendable {
  // One statement at a time: the handle and the prepared lookup are used under `lock` only.
  private let lock = Mutex(())
  private let handle: OpaquePointer
  private let lookup: OpaquePointer
  /// Kept alive for SQLite's busy handler, which is given an unretained pointer to it.
  private let patience: Patience

  private static let select =
    "SELECT payload, storedAt, etag, lastModified FROM cache_entry WHERE key = ?"

  /// The connection, or nil when the file does not exist, cannot be read now, or does not hold
  /// exactly the migrations `known` (new, older or newer): the full opening decides those.
  static func open(_ path: String, known: Set<String>, patience: Patience) -> LookupConnection? {
    var handle: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
    guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
      sqlite3_close_v2(handle)
      return nil
    }
    sqlite3_busy_handler(
      handle,
      { context, tries in
        guard let context else { return 0 }
        let patience = Unmanaged<Patience>.fromOpaque(context).takeUnretainedValue()
        return patience.mayWait(tries: Int(tries)) ? 1 : 0
      }, Unmanaged.passUnretained(patience).toOpaque())
    guard sqlite3_exec(handle, "PRAGMA query_only = 1", nil, nil, nil) == SQLITE_OK,
      let applied = strings(handle, "SELECT identifier FROM grdb_migrations"),
      Set(applied) == known,
      let lookup = prepare(handle, select)
    else {
      sqlite3_close_v2(handle)
      return nil
    }
    return LookupConnection(handle: handle, lookup: lookup, patience: patience)
  }

  private init(handle: OpaquePointer, lookup: OpaquePointer, patience: Patience) {
    self.handle = handle
    self.lookup = lookup
    self.patience = patience
  }

  deinit {
    sqlite3_finalize(lookup)
    sqlite3_close_v2(handle)
  }

  /// The entry stored under `key`, or nil. Throws the SQLite failure as a `DatabaseError`.
  func entry(for key: String) throws -> CacheEntry? {
    try lock.withLock { _ -> CacheEntry? in
      defer {
        sqlite3_reset(lookup)
        sqlite3_clear_bindings(lookup)
      }
      // SQLITE_TRANSIENT: SQLite copies the key before this call returns.
      let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
      guard sqlite3_bind_text(lookup, 1, key, -1, transient) == SQLITE_OK else {
        throw failure()
      }
      switch sqlite3_step(lookup) {
      case SQLITE_DONE: return nil
      case SQLITE_ROW:
        let count = Int(sqlite3_column_bytes(lookup, 0))
        let payload =
          count > 0
          ? sqlite3_column_blob(lookup, 0).map { Data(bytes: $0, count: count) } ?? Data()
          : Data()
        return CacheEntry(
          key: key, payload: payload,
          storedAt: Date(timeIntervalSince1970: sqlite3_column_double(lookup, 1)),
          validators: CacheValidators(etag: text(lookup, 2), lastModified: text(lookup, 3)))
      default: throw failure()
      }
    }
  }

  /// The connection's last error as GRDB reports errors, so it is worded like the others.
  private func failure() -> DatabaseError {
    DatabaseError(
      resultCode: ResultCode(rawValue: sqlite3_extended_errcode(handle)),
      message: String(cString: sqlite3_errmsg(handle)))
  }

  private static func prepare(_ handle: OpaquePointer, _ sql: String) -> OpaquePointer? {
    var statement: OpaquePointer?
    guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
      sqlite3_finalize(statement)
      return nil
    }
    return statement
  }

  /// The first column of every row `sql` gives, or nil when it fails.
  private static func strings(_ handle: OpaquePointer, _ sql: String) -> [String]? {
    guard let statement = prepare(handle, sql) else { return nil }
    defer { sqlite3_finalize(statement) }
    var values: [String] = []
    while true {
      switch sqlite3_step(statement) {
      case SQLITE_ROW: values.append(text(statement, 0) ?? "")
      case SQLITE_DONE: return values
      default: return nil
      }
    }
  }
}

/// Column `index` of the current row as text, nil when NULL.
private func text(_ statement: OpaquePointer, _ index: Int32) -> String? {
  guard sqlite3_column_type(statement, index) != SQLITE_NULL,
    let bytes = sqlite3_column_text(statement, index)
  else { return nil }
  let count = Int(sqlite3_column_bytes(statement, index))
  return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}
