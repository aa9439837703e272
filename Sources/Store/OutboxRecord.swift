import Domain
import Foundation
import GRDB
import Layers

/// An `outbox_write` row, as GRDB's records read it: its table, its columns by name, and the
/// write it holds. A row this build cannot read (another program wrote a text `tries`, a time
/// past any plausible range, no request) is never a trap and never sent: it comes back as a
/// `.damaged` write, its id and what can be read of it kept and the reason in `lastError`, so
/// `outbox list` names it and `outbox drop ID` removes it.
struct OutboxRecord: FetchableRecord, TableRecord {
  static let databaseTableName = "outbox_write"

  /// The table's columns (`SQLiteOutboxStore.migrator` makes them).
  enum Columns: String, ColumnExpression {
    case id, name, summary, origin, partition, orderingKey, idempotencyKey, request, invalidates
    case state, tries, lastError, serverBody, createdAt, nextTryAt, leaseHolder, leaseUntil
    case ifMatch, serverETag, edits
  }

  /// The write, `.damaged` when the row cannot be read.
  let write: PendingWrite
  /// The sync that holds the write (`<host> <pid>`), and until when; nil when none does.
  let lease: (holder: String, until: Date)?

  init(row: Row) {
    func value(_ column: Columns) -> DatabaseValue {
      row.hasColumn(column.name) ? row[column] as DatabaseValue : .null
    }
    if let holder = StoredRow.text(value(.leaseHolder)),
      let until = StoredRow.date(value(.leaseUntil))
    {
      lease = (holder, until)
    } else {
      lease = nil
    }
    write = Self.write(value)
  }

  /// The write the columns `value` gives hold.
  private static func write(_ value: (Columns) -> DatabaseValue) -> PendingWrite {
    var problems: [String] = []
    func text(_ column: Columns, nullable: Bool = false) -> String? {
      let stored = value(column)
      if let text = StoredRow.text(stored) { return text }
      if !(nullable && stored.isNull) {
        problems.append("its \(column.name) is \(StoredRow.kind(of: stored)), not text")
      }
      return nil
    }
    func time(_ column: Columns) -> Date {
      let stored = value(column)
      if let date = StoredRow.date(stored) { return date }
      problems.append(
        "its \(column.name) is \(StoredRow.kind(of: stored)), not a time since 1970")
      return Date(timeIntervalSince1970: 0)
    }
    let id: Int64
    if case .int64(let integer) = value(.id).storage { id = integer } else { id = 0 }
    let request = StoredRow.data(value(.request))
    if request == nil {
      problems.append("its request is \(StoredRow.kind(of: value(.request))), not data")
    }
    let tries = StoredRow.count(value(.tries))
    if tries == nil {
      problems.append("its tries is \(StoredRow.kind(of: value(.tries))), not a count")
    }
    let stateText = text(.state)
    let state = stateText.flatMap(WriteState.init(rawValue:))
    if let stateText, state == nil || state == .damaged {
      problems.append("its state \"\(stateText.prefix(40))\" is not one Kernel writes")
    }
    let invalidates = text(.invalidates) ?? ""
    let serverBody = value(.serverBody)
    var edits: [String: JSONValue] = [:]
    if let text = text(.edits, nullable: true) {
      if let read = try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8)) {
        edits = read
      } else {
        problems.append("its edits are not the JSON object Kernel writes")
      }
    }
    var write = PendingWrite(
      id: id, name: text(.name) ?? "?", summary: text(.summary) ?? "an unreadable write",
      origin: text(.origin) ?? "", partition: text(.partition) ?? "",
      orderingKey: text(.orderingKey) ?? "", idempotencyKey: text(.idempotencyKey) ?? "",
      request: request ?? Data(),
      invalidates: invalidates.isEmpty ? [] : invalidates.split(separator: "\n").map(String.init),
      state: state ?? .damaged, tries: tries ?? 0,
      lastError: text(.lastError, nullable: true),
      serverBody: StoredRow.data(serverBody) ?? StoredRow.text(serverBody).map { Data($0.utf8) },
      createdAt: time(.createdAt), nextTryAt: time(.nextTryAt),
      ifMatch: text(.ifMatch, nullable: true), serverETag: text(.serverETag, nullable: true),
      edits: edits)
    if !problems.isEmpty {
      write.state = .damaged
      write.lastError =
        "this build cannot read the row: \(problems.joined(separator: "; ")); it is never sent:"
        + " drop it with outbox drop \(id)"
    }
    return write
  }
}
