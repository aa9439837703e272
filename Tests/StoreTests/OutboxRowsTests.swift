import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import Store
import Testing

/// Rows another program wrote into the outbox file: a row that cannot be read is a damaged
/// write named by its id, never a trap; it is never sent, it can be dropped, and the writes
/// after it still go.
@Suite struct OutboxRowsTests {
  private func write(_ key: String, at seconds: TimeInterval) -> PendingWrite {
    PendingWrite(
      name: "rate", summary: "rate \(key)", origin: "http://127.0.0.1:9", partition: "p",
      orderingKey: key, idempotencyKey: UUID().uuidString, request: Data(key.utf8),
      invalidates: ["movies/\(key)"], createdAt: Date(timeIntervalSince1970: seconds),
      nextTryAt: Date(timeIntervalSince1970: seconds))
  }

  @Test(arguments: [
    "tries = 'many'", "createdAt = 1e300", "nextTryAt = 'soon'", "tries = 1e300",
    "tries = -3", "request = 42", "state = 'lost'", "name = x'00ff'", "createdAt = -1e300",
    "leaseHolder = 5, leaseUntil = 'never'",
  ])
  func aDamagedRowIsNamedNeverSentAndDroppable(_ change: String) async throws {
    let folder = try TemporaryDirectory("outbox")
    defer { folder.remove() }
    let file = folder.appending("outbox.sqlite")
    let store = try SQLiteOutboxStore.open(at: file)
    let damaged = try await store.add(write("1", at: 1_000))
    let good = try await store.add(write("2", at: 1_000))
    let outside = try DatabaseQueue(path: file.path)
    try await outside.write { db in
      try db.execute(
        sql: "UPDATE outbox_write SET \(change) WHERE id = ?", arguments: [damaged.id])
    }

    let kept = try await store.writes()
    #expect(kept.map(\.id) == [damaged.id, good.id])
    let named = try #require(kept.first)
    let readable = change.hasPrefix("leaseHolder")
    #expect(named.state == (readable ? .pending : .damaged), "\(named)")
    if !readable {
      #expect(named.lastError?.contains("outbox drop \(damaged.id)") == true)
    }

    let now = Date(timeIntervalSince1970: 2_000)
    let leased = try await store.lease(
      origin: "http://127.0.0.1:9", now: now, until: now.addingTimeInterval(60))
    #expect(leased?.id == (readable ? damaged.id : good.id))

    #expect(try await store.drop(damaged.id)?.id == damaged.id)
    #expect(try await store.writes().map(\.id) == [good.id])
  }

  /// Every column of many rows given a value of any SQLite type chosen at random (seeded, so a
  /// failure repeats): listing, leasing and dropping each read every row without a trap.
  @Test func rowsOfAnyContentAreReadLeasedAndDroppedWithoutATrap() async throws {
    let folder = try TemporaryDirectory("outbox")
    defer { folder.remove() }
    let file = folder.appending("outbox.sqlite")
    let store = try SQLiteOutboxStore.open(at: file)
    for index in 0..<200 { _ = try await store.add(write("\(index % 7)", at: 1_000)) }
    let columns = [
      "name", "summary", "origin", "partition", "orderingKey", "request", "invalidates",
      "state", "tries", "lastError", "serverBody", "createdAt", "nextTryAt", "leaseHolder",
      "leaseUntil",
    ]
    let values = [
      "NULL", "'many'", "x'00ff'", "1e300", "-1e300", "9223372036854775807", "-1", "0", "2.5",
      "'pending'", "'conflict'", "'http://127.0.0.1:9'", "''", "1500", "'1e3'",
    ]
    var random = SplitMix(seed: 41)
    let changes = (1...200).map { id in
      let column = columns[Int(random.next() % UInt64(columns.count))]
      let value = values[Int(random.next() % UInt64(values.count))]
      return "UPDATE outbox_write SET \(column) = \(value) WHERE id = \(id)"
    }
    let outside = try DatabaseQueue(path: file.path)
    try await outside.write { db in
      // NOT NULL columns refuse a NULL: that change is skipped, as SQLite refuses it.
      for change in changes { try? db.execute(sql: change) }
    }
    let kept = try await store.writes()
    #expect(kept.count == 200)
    let now = Date(timeIntervalSince1970: 2_000)
    while let leased = try await store.lease(
      origin: "http://127.0.0.1:9", now: now, until: now.addingTimeInterval(60))
    {
      #expect(leased.state == .pending)
      try await store.settle(leased.id, .sent)
    }
    for write in try await store.writes() { _ = try await store.drop(write.id) }
    #expect(try await store.writes().isEmpty)
  }
}

/// A small seeded generator: the same seed gives the same rows.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}
