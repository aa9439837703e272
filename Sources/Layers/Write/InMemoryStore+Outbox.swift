import Domain
import Foundation

/// The outbox's rules as the SQLite outbox keeps them, over a dictionary: a write is due when
/// no earlier write of its ordering key waits or is in conflict, a lease holds it until its
/// time, and a held write is neither dropped nor replaced.
extension InMemoryStore {
  public func add(_ write: PendingWrite) async throws -> PendingWrite {
    kept.withLock { kept in
      kept.last += 1
      var added = write
      added.id = kept.last
      kept.writes[added.id] = added
      return added
    }
  }

  public func writes() async throws -> [PendingWrite] {
    kept.withLock { $0.writes.values.sorted { $0.id < $1.id } }
  }

  public func writes(editing key: String, partition: String) async throws -> [PendingWrite] {
    try await writes().filter {
      $0.state == .pending && $0.partition == partition && $0.edits[key] != nil
    }
  }

  public func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite? {
    kept.withLock { kept in
      let ordered = kept.writes.values.sorted { $0.id < $1.id }
      let due = ordered.first { write in
        write.origin == origin && write.state == .pending && write.nextTryAt <= now
          && (kept.leases[write.id].map { $0 <= now } ?? true)
          && !ordered.contains {
            $0.id < write.id && $0.origin == origin && $0.orderingKey == write.orderingKey
              && ($0.state == .pending || $0.state == .conflict)
          }
      }
      if let due { kept.leases[due.id] = until }
      return due
    }
  }

  public func settle(_ id: Int64, _ outcome: WriteOutcome) async throws {
    kept.withLock { kept in
      guard kept.leases.removeValue(forKey: id) != nil, var write = kept.writes[id] else { return }
      write.tries += 1
      switch outcome {
      case .sent:
        kept.writes[id] = nil
        return
      case .pending(let error, let next):
        write.lastError = error
        write.nextTryAt = next
      case .conflict(let error, let body, let etag):
        (write.state, write.lastError, write.serverBody, write.serverETag) =
          (.conflict, error, body, etag)
      case .rejected(let error):
        (write.state, write.lastError) = (.rejected, error)
      }
      kept.writes[id] = write
    }
  }

  public func makeDue(origin: String, now: Date) async throws {
    kept.withLock { kept in
      for (id, write) in kept.writes
      where write.origin == origin && write.state == .pending && write.nextTryAt > now {
        kept.writes[id]?.nextTryAt = now
      }
    }
  }

  public func retry(_ id: Int64, now: Date) async throws -> PendingWrite? {
    kept.withLock { kept in
      guard var write = kept.writes[id] else { return nil }
      (write.state, write.nextTryAt, write.serverBody) = (.pending, now, nil)
      kept.writes[id] = write
      return write
    }
  }

  public func drop(_ id: Int64) async throws -> PendingWrite? {
    try kept.withLock { kept in
      try Self.refuseHeld(id, kept.leases)
      return kept.writes.removeValue(forKey: id)
    }
  }

  public func replace(
    _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
  ) async throws -> PendingWrite? {
    try kept.withLock { kept in
      try Self.refuseHeld(id, kept.leases)
      guard var write = kept.writes[id] else { return nil }
      (write.request, write.idempotencyKey, write.ifMatch) = (request, idempotencyKey, ifMatch)
      (write.state, write.nextTryAt, write.serverBody, write.serverETag) = (.pending, now, nil, nil)
      kept.writes[id] = write
      return write
    }
  }

  /// A write a sync holds is changed only once its lease ends.
  private static func refuseHeld(_ id: Int64, _ leases: [Int64: Date]) throws {
    if let until = leases[id], until > Date() { throw WriteHeld(id: id) }
  }
}

/// The kept write `id` is being sent by a sync: it cannot be dropped or replaced until that
/// sync ends.
struct WriteHeld: Error, CustomStringConvertible {
  let id: Int64
  var description: String { "write \(id) is being sent by a sync; try again when it ends" }
}
