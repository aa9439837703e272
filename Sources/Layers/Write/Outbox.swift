import Api
import Domain
import Foundation
import Synchronization

/// Where the outbox keeps writes: one durable row per write, never evicted. The Store module's
/// SQLite file is the one apps keep on disk.
///
/// Writes are sent in the order of their ids per ordering key: a write is due only when no
/// earlier write of its key waits (pending) or is in conflict. A sync *leases* the write it
/// sends, in a transaction, so two syncs never send the same write at once; a lease ends when
/// the write is settled, when it expires, or when its holder is found dead.
public protocol OutboxStore: Sendable {
  /// Keeps `write` (its id is the store's to give) in one transaction; returns it with its id.
  func add(_ write: PendingWrite) async throws -> PendingWrite
  /// Every kept write, oldest first.
  func writes() async throws -> [PendingWrite]
  /// The pending writes of `partition` whose optimistic edits changed the stored copy `key`
  /// (`PendingWrite.edits`), oldest first: what that copy shows of them.
  func writes(editing key: String, partition: String) async throws -> [PendingWrite]
  /// Takes the next write to send to `origin`: the oldest pending one due by `now` with no
  /// earlier write of its ordering key waiting, that no live sync holds; holds it until `until`.
  func lease(origin: String, now: Date, until: Date) async throws -> PendingWrite?
  /// Records how a held write's try went, releasing it: sent (it leaves the outbox), or its
  /// new state.
  func settle(_ id: Int64, _ outcome: WriteOutcome) async throws
  /// Makes every pending write of `origin` due at `now` (a sync a person asked for).
  func makeDue(origin: String, now: Date) async throws
  /// Makes the write `id` pending and due at `now`, whatever its state; nil when there is none.
  func retry(_ id: Int64, now: Date) async throws -> PendingWrite?
  /// Removes the write `id`, unless a live sync holds it; nil when there is none.
  func drop(_ id: Int64) async throws -> PendingWrite?
  /// Gives the write `id` a new request and idempotency key in its place (its order kept),
  /// pending and due at `now`, unless a live sync holds it; nil when there is none.
  func replace(
    _ id: Int64, request: Data, idempotencyKey: String, ifMatch: String?, now: Date
  ) async throws -> PendingWrite?
}

/// How one try of a kept write went.
public enum WriteOutcome: Sendable, Hashable {
  /// The api took it: it leaves the outbox.
  case sent
  /// It could not be sent now (unreachable, 5xx, 408, 429, authentication): tried again at
  /// `nextTryAt` or by a sync a person asks for.
  case pending(error: String, nextTryAt: Date)
  /// The api says it conflicts with what it holds (409, 412): kept with the server's body and
  /// the ETag of its version.
  case conflict(error: String, body: Data?, etag: String? = nil)
  /// The api refused it (another 4xx): kept with its message.
  case rejected(error: String)
}

/// What one sync did.
public struct SyncReport: Sendable, Hashable {
  /// The writes the api took.
  public var sent: [PendingWrite] = []
  /// The writes it answered with a conflict (409, 412).
  public var conflicts: [PendingWrite] = []
  /// The writes it refused.
  public var rejected: [PendingWrite] = []
  /// Writes tried and still pending, with why.
  public var failed: [PendingWrite] = []
  /// Why the sync stopped before the end: the api could not be reached, or refused the
  /// credential (`stoppedFor` says which).
  public var stoppedBecause: String?
  /// The kind of failure that stopped it: `.unreachable` or `.authentication`.
  public var stoppedFor: ServiceFailure?
  /// The origin whose writes it sent (`http://127.0.0.1:8080`): those of another environment
  /// wait for a sync in that one.
  public var origin = ""

  /// Nothing done yet.
  public init() {}

  /// How many writes it sent to the api, whatever their outcome.
  public var tried: Int { sent.count + conflicts.count + rejected.count + failed.count }
}

/// The outbox: writes kept durably until a sync sends them (Store5's `MutableStore`, TanStack
/// DB's offline transactions). A `Writer` keeps a write here when the api cannot take it; a
/// sync sends what is kept in order, each once at a time, with its own idempotency key.
public struct Outbox: Sendable {
  /// Where writes are kept.
  public let store: any OutboxStore
  /// The clock of backoff and leases.
  public let clock: WallClock
  /// How long a sync holds a write it is sending before another sync may take it: longer than
  /// a call may take (`timeouts.callSeconds`), so a live sync is never overtaken.
  public let lease: Duration
  /// How many writes a sync sends at once (of different ordering keys).
  public let concurrency: Int

  /// An outbox over `store`.
  public init(
    store: any OutboxStore, clock: WallClock = .system, lease: Duration = .seconds(120),
    concurrency: Int = 8
  ) {
    self.store = store
    self.clock = clock
    self.lease = lease
    self.concurrency = concurrency
  }

  /// Keeps `call` for `origin`, due now, with what its optimistic edits changed of their
  /// stored copies (`edits`, by key). The cached copies its optimistic edits change are among
  /// those it invalidates: whatever becomes of it, no copy keeps an edit the api did not take,
  /// nor one it took but answered differently.
  public func keep<Value>(
    _ call: ServiceCall<Value>, origin: String, partition: String, ifMatch: String? = nil,
    edits: [String: JSONValue] = [:]
  ) async throws -> PendingWrite {
    let now = clock.now()
    var invalidates = call.invalidates
    for edit in call.optimistic where !invalidates.contains(edit.key) {
      invalidates.append(edit.key)
    }
    return try await store.add(
      PendingWrite(
        name: call.name, summary: call.summary, origin: origin, partition: partition,
        orderingKey: call.orderingKey, idempotencyKey: call.idempotencyKey ?? UUID().uuidString,
        request: try call.recorded(),
        invalidates: invalidates, createdAt: now, nextTryAt: now, ifMatch: ifMatch,
        edits: edits))
  }

  /// Forgets the kept write `id` (it will never be sent) and undoes its optimistic edits: each
  /// entity it edited gets the api's copy back, so no answer shows it pending. Nil when there
  /// is none.
  public func drop(_ id: Int64, cache: (any CacheStore)?) async throws -> PendingWrite? {
    guard let dropped = try await store.drop(id) else { return nil }
    await settleCopies(of: dropped, in: cache, taken: false)
    return dropped
  }

  /// Settles the cached copies `write` changes (its optimistic edits among them): `taken` by
  /// the api, they are stale (an entity stays, marked so; an answer stored whole goes); dropped,
  /// refused or in conflict, each edit is undone. A copy other pending writes edit too shows
  /// what their edits make of the api's copy (`EditSettlement`).
  func settleCopies(of write: PendingWrite, in cache: (any CacheStore)?, taken: Bool) async {
    guard let cache else { return }
    for key in write.invalidates {
      let others = (try? await store.writes(editing: key, partition: write.partition)) ?? []
      let remaining = others.filter { $0.id != write.id }.compactMap { $0.edits[key] }
      try? await cache.settleEdit(
        of: Self.key(key, in: write.partition),
        EditSettlement(taken: taken, change: write.edits[key], remaining: remaining))
    }
  }

  /// Makes every stored copy show what the kept writes make of the api's copy, after a run
  /// was stopped between its two files: an edit no kept write stands behind (the outbox file
  /// removed or replaced by an older copy) is undone, and a kept write whose edit the copy does
  /// not show (stopped after the write was kept, before its edit was stored) has its edit made
  /// again from what the write keeps (`PendingWrite.edits`). The keys undone and the keys
  /// edited again, in `cache`'s key order.
  public func reconcile(_ cache: any CacheStore, writes kept: [PendingWrite]) async throws
    -> (undone: [String], redone: [String])
  {
    var edits: [String: [JSONValue]] = [:]
    var behind = Set<String>()
    for write in kept where write.state == .pending {
      for key in write.invalidates { behind.insert(Self.key(key, in: write.partition)) }
      for (key, change) in write.edits {
        edits[Self.key(key, in: write.partition), default: []].append(change)
      }
    }
    let orphans = try await cache.pendingKeys().filter { !behind.contains($0) }
    for key in orphans { try await cache.settleEdit(of: key, EditSettlement(taken: false)) }
    var redone: [String] = []
    for (key, changes) in edits.sorted(by: { $0.key < $1.key }) {
      guard let entry = try await cache.entry(for: key), let edited = entry.showing(changes),
        edited != entry
      else { continue }
      try await cache.store(edited)
      redone.append(key)
    }
    return (orphans, redone)
  }

  /// Resolves the conflict of the kept write `id` in its favour: it is requeued as it is, its
  /// `If-Match` now the ETag the conflict answered with (the server's version), with a new
  /// idempotency key, in its place in its order; the next sync sends it. Nil when there is no
  /// such write.
  public func resendOverServerVersion(_ id: Int64) async throws -> PendingWrite? {
    guard let kept = try await store.writes().first(where: { $0.id == id }) else { return nil }
    return try await store.replace(
      id, request: kept.request, idempotencyKey: UUID().uuidString,
      ifMatch: kept.serverETag ?? kept.ifMatch, now: clock.now())
  }

  /// Whether a write of `orderingKey` for `origin` still waits or is in conflict: a new write of
  /// the key goes behind it.
  public func holdsBack(orderingKey: String, origin: String) async throws -> Bool {
    try await store.writes().contains {
      $0.origin == origin && $0.orderingKey == orderingKey && $0.state != .rejected
    }
  }

  /// Sends the due writes of `origin` through `send` and settles each: sent (its cached answers
  /// dropped from `cache`), conflict, rejected, or still pending with backoff. `force` makes
  /// every pending write due now. Up to `concurrency` writes are in flight, never two of one
  /// ordering key: each worker leases the next write whose earlier writes are settled. Stops at
  /// the first write the api cannot be reached for: the rest would fail alike.
  public func sync(
    origin: String, send: WriteSender, cache: (any CacheStore)?, force: Bool = false,
    progress: (@Sendable (PendingWrite, WriteOutcome) -> Void)? = nil
  ) async throws -> SyncReport {
    if force { try await store.makeDue(origin: origin, now: clock.now()) }
    let stopped = StopReason()
    return try await withThrowingTaskGroup(of: SyncReport.self) { group in
      for _ in 0..<max(1, concurrency) {
        group.addTask {
          try await work(
            origin: origin, send: send, cache: cache, progress: progress, stopped: stopped)
        }
      }
      var report = SyncReport()
      for try await part in group {
        report.sent += part.sent
        report.conflicts += part.conflicts
        report.rejected += part.rejected
        report.failed += part.failed
      }
      for keyPath in [\SyncReport.sent, \.conflicts, \.rejected, \.failed] {
        report[keyPath: keyPath].sort { $0.id < $1.id }
      }
      (report.stoppedBecause, report.stoppedFor) = stopped.reason.withLock { ($0, stopped.kind) }
      report.origin = origin
      return report
    }
  }

  /// One worker of a sync: leases, sends and settles writes until none is due or the api is
  /// found unreachable (`stopped`, for every worker).
  private func work(
    origin: String, send: WriteSender, cache: (any CacheStore)?,
    progress: (@Sendable (PendingWrite, WriteOutcome) -> Void)?, stopped: StopReason
  ) async throws -> SyncReport {
    var report = SyncReport()
    while !Task.isCancelled, stopped.reason.withLock({ $0 == nil }) {
      let now = clock.now()
      guard
        let write = try await store.lease(
          origin: origin, now: now, until: now.addingTimeInterval(lease.seconds))
      else { break }
      var tried = write
      tried.tries += 1
      let outcome: WriteOutcome
      var stops: ServiceFailure?
      do {
        _ = try await send(
          write.request, idempotencyKey: write.idempotencyKey, ifMatch: write.ifMatch)
        outcome = .sent
      } catch {
        outcome = Self.outcome(of: error, tries: tried.tries, now: clock.now())
        // Unreachable, or a credential refused: every other write would fail alike.
        let failure = ServiceFailure.of(error)
        if failure == .unreachable || failure == .authentication { stops = failure }
      }
      try await store.settle(write.id, outcome)
      progress?(tried, outcome)
      switch outcome {
      case .sent:
        report.sent.append(tried)
        await settleCopies(of: write, in: cache, taken: true)
      case .conflict(let error, let body, let etag):
        tried.state = .conflict
        tried.lastError = error
        tried.serverBody = body
        tried.serverETag = etag
        report.conflicts.append(tried)
        await settleCopies(of: write, in: cache, taken: false)
      case .rejected(let error):
        tried.state = .rejected
        tried.lastError = error
        report.rejected.append(tried)
        await settleCopies(of: write, in: cache, taken: false)
      case .pending(let error, _):
        tried.lastError = error
        report.failed.append(tried)
        if let stops {
          stopped.stop(error, for: stops)
          return report
        }
      }
    }
    return report
  }

  /// The cache key of `key` in `partition`, as `CachingLayer` stores it.
  static func key(_ key: String, in partition: String) -> String {
    partition.isEmpty ? key : partition + " " + key
  }

  /// How a failed try settles a write: sent when the api took it and only its answer was
  /// refused (`ApiError.isRefusedAnswerToATakenRequest`), a conflict (409, 412), a rejection
  /// (any other 4xx but 401, 408 and 429), or pending again, due after a backoff that doubles
  /// with each try from 30 seconds to at most an hour.
  public static func outcome(of error: any Error, tries: Int, now: Date) -> WriteOutcome {
    if (error as? ApiError)?.isRefusedAnswerToATakenRequest == true { return .sent }
    let sentence = "\(error)"
    // A write that cannot be sent at all (its kept bytes are not a request, its file is gone)
    // would fail the same way for ever: it waits for the user, who drops it.
    if !(error is HTTPFailure), ServiceFailure.of(error) == .rejected {
      return .rejected(error: sentence + " It can never be sent as it is: drop it (outbox drop).")
    }
    if let answered = error as? HTTPFailure {
      switch answered.status {
      case 409, 412: return .conflict(error: sentence, body: answered.body, etag: answered.etag)
      case 401, 408, 429, 500...: break
      case 400..<500: return .rejected(error: sentence)
      default: break
      }
    }
    let delay = min(30 * pow(2, Double(max(0, tries - 1))), 3600)
    return .pending(error: sentence, nextTryAt: now.addingTimeInterval(delay))
  }
}

/// Why a sync's workers stop: the first that found the api unreachable (or the credential
/// refused) says so.
final class StopReason: Sendable {
  let reason = Mutex<String?>(nil)
  private let failure = Mutex<ServiceFailure?>(nil)

  var kind: ServiceFailure? { failure.withLock { $0 } }

  func stop(_ why: String, for kind: ServiceFailure) {
    let first = reason.withLock { reason -> Bool in
      guard reason == nil else { return false }
      reason = why
      return true
    }
    if first { failure.withLock { $0 = kind } }
  }
}

/// How a stack's `api` sends a kept write: its request bytes with its idempotency key and the
/// `If-Match` it was made with, through the whole pipeline (authenticator, adapters, retriers,
/// deadline); returns the api's answer (status, header fields, body), or throws the failure (an
/// `HTTPFailure` when the api answered).
public struct WriteSender: Sendable {
  let body:
    @Sendable (_ request: Data, _ idempotencyKey: String, _ ifMatch: String?) async throws
      -> ApiResponse

  /// Sends by `send`.
  public init(
    _ send:
      @escaping @Sendable (_ request: Data, _ idempotencyKey: String, _ ifMatch: String?)
      async throws -> ApiResponse
  ) {
    body = send
  }

  /// Sends `request` with `idempotencyKey` and `ifMatch`; returns the api's answer.
  public func callAsFunction(_ request: Data, idempotencyKey: String, ifMatch: String? = nil)
    async throws -> ApiResponse
  {
    try await body(request, idempotencyKey, ifMatch)
  }
}
