import Domain
import Foundation
import KernelTesting
import Layers
import MoviesKit
import Store
import Synchronization
import Testing

/// A write is kept in the outbox's file and its edit shown in the cache's: two files, so a run
/// can be stopped between them. Stopped after every durable step of two kept ratings of one
/// movie (nothing after the stop reaches either file, as with a SIGKILL), the files opened
/// again and reconciled as the next run does: the copy shows exactly the writes kept, never an
/// edit whose write was not kept, never a kept write whose edit was lost.
extension OutboxTests {
  /// Counts the durable steps made through it; from step `stopAt` on, every change fails and
  /// none is made.
  final class Stopping: Sendable {
    let stopAt: Int
    private let made = Mutex(0)
    init(stopAt: Int) { self.stopAt = stopAt }

    var steps: Int { made.withLock { $0 } }

    func step() throws {
      try made.withLock { made in
        guard made < stopAt else { throw CancellationError() }
        made += 1
      }
    }
  }

  /// A cache whose changes stop at a step.
  struct StoppingCache: CacheStore {
    let base: any CacheStore
    let stopping: Stopping
    func entry(for key: String) async throws -> CacheEntry? { try await base.entry(for: key) }
    func store(_ entry: CacheEntry) async throws { try await store([entry]) }
    func store(_ entries: [CacheEntry]) async throws {
      try stopping.step()
      try await base.store(entries)
    }
    func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {
      try stopping.step()
      try await base.renew(key, storedAt: storedAt, validators: validators)
    }
    func remove(_ key: String) async throws {
      try stopping.step()
      try await base.remove(key)
    }
    func settleEdit(of key: String, _ settlement: EditSettlement) async throws {
      try stopping.step()
      try await base.settleEdit(of: key, settlement)
    }
    func pendingKeys() async throws -> [String] { try await base.pendingKeys() }
    func apply(_ changes: StoredChanges) async throws -> Bool {
      try await base.apply(changes)
    }
    func removeEntity(_ key: String, goneAt date: Date?) async throws -> Bool {
      try await base.removeEntity(key, goneAt: date)
    }
    func changes() -> AsyncThrowingStream<Void, any Error> { base.changes() }
  }

  /// An outbox whose changes stop at the same count.
  struct StoppingOutbox: OutboxStore {
    let base: any OutboxStore
    let stopping: Stopping
    func add(_ write: PendingWrite) async throws -> PendingWrite {
      try stopping.step()
      return try await base.add(write)
    }
    func writes() async throws -> [PendingWrite] { try await base.writes() }
    func writes(editing key: String, partition: String) async throws -> [PendingWrite] {
      try await base.writes(editing: key, partition: partition)
    }
    func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite? {
      try stopping.step()
      return try await base.lease(origin: origin, now: now, until: until)
    }
    func settle(_ id: Int64, _ outcome: WriteOutcome) async throws {
      try stopping.step()
      try await base.settle(id, outcome)
    }
    func makeDue(origin: String, now: Date) async throws {
      try stopping.step()
      try await base.makeDue(origin: origin, now: now)
    }
    func retry(_ id: Int64, now: Date) async throws -> PendingWrite? {
      try stopping.step()
      return try await base.retry(id, now: now)
    }
    func drop(_ id: Int64) async throws -> PendingWrite? {
      try stopping.step()
      return try await base.drop(id)
    }
    func replace(
      _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
    ) async throws -> PendingWrite? {
      try stopping.step()
      return try await base.replace(
        id, request: request, idempotencyKey: idempotencyKey, ifMatch: ifMatch, now: now)
    }
  }

  @Test func aRunStoppedAtAnyStepOfKeepingWritesLeavesTheCopyShowingExactlyTheWritesKept()
    async throws
  {
    let scores = [80, 90]
    let everyStep = 2 * scores.count
    // Steps: each write is kept (one transaction in the outbox's file), then its edit stored
    // (one in the cache's); stopped before each, after the last, and never.
    for stopAt in 0...(everyStep + 1) {
      try await withSetup { setup in
        let (apiRating, key) = try await stored(setup)
        let outboxFile = try #require((setup.outbox.store as? SQLiteOutboxStore)?.file)
        let cacheFile = try #require((setup.cache as? SQLiteCacheStore)?.file)
        let stopping = Stopping(stopAt: stopAt)
        let writer = Writer(
          origin: setup.origin, partition: setup.origin, send: nil,
          outbox: Outbox(store: StoppingOutbox(base: setup.outbox.store, stopping: stopping)),
          cache: StoppingCache(base: setup.cache, stopping: stopping))
        for score in scores {
          do { _ = try await writer.write(try .rate(movie: 9, score: score)) } catch {
            break
          }
        }
        #expect(stopping.steps == min(stopAt, everyStep))

        // The next run: both files opened anew, and reconciled.
        let outbox = Outbox(store: try SQLiteOutboxStore.open(at: outboxFile))
        let cache = try SQLiteCacheStore.open(at: cacheFile)
        let kept = try await outbox.store.writes()
        _ = try await outbox.reconcile(cache, writes: kept)
        let entry = try #require(try await cache.entry(for: key))
        let codec = try #require(ServiceCall<Movie>.movie(id: 9).codec)
        let shown = try codec.decode(entry.payload).rating
        // As many writes kept as their steps were made, and the copy shows the last of them.
        #expect(kept.count == min((stopAt + 1) / 2, scores.count))
        let expected = kept.isEmpty ? apiRating : Double(scores[kept.count - 1])
        #expect(shown == expected, "stopped at step \(stopAt)")
        #expect(entry.isPending == !kept.isEmpty, "stopped at step \(stopAt)")
        // Reconciled once, it stays so: a second reconcile changes nothing.
        #expect(try await outbox.reconcile(cache, writes: kept) == ([], []))
      }
    }
  }
}
