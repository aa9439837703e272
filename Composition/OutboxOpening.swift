import Domain
import Foundation
import Layers
import Store
import Synchronization

/// The outbox in the data dir, opened when a write is first kept, listed or synced (never by
/// validation, `graph` or `doctor`); a file that cannot be opened fails every use with its own
/// sentence, and is left as it is.
final class OutboxOpening: OutboxStore {
  private let file: URL
  private let opened = Mutex<SQLiteOutboxStore?>(nil)

  init(file: URL) { self.file = file }

  private func store() throws -> SQLiteOutboxStore {
    try opened.withLock { opened in
      if let opened { return opened }
      let store = try SQLiteOutboxStore.open(at: file)
      opened = store
      return store
    }
  }

  func add(_ write: PendingWrite) async throws -> PendingWrite { try await store().add(write) }
  func writes() async throws -> [PendingWrite] { try await store().writes() }
  func writes(editing key: String, partition: String) async throws -> [PendingWrite] {
    try await store().writes(editing: key, partition: partition)
  }
  func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite? {
    try await store().lease(origin: origin, now: now, until: until)
  }
  func settle(_ id: Int64, _ outcome: WriteOutcome) async throws {
    try await store().settle(id, outcome)
  }
  func makeDue(origin: String, now: Date) async throws {
    try await store().makeDue(origin: origin, now: now)
  }
  func retry(_ id: Int64, now: Date) async throws -> PendingWrite? {
    try await store().retry(id, now: now)
  }
  func drop(_ id: Int64) async throws -> PendingWrite? { try await store().drop(id) }
  func replace(
    _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
  ) async throws
    -> PendingWrite?
  {
    try await store().replace(
      id, request: request, idempotencyKey: idempotencyKey, ifMatch: ifMatch, now: now)
  }
}
