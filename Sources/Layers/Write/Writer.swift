import Api
import Domain
import Foundation

/// How a service's stack writes, as its config names it (`books: [cache(networkFirst), outbox,
/// api]`; `ServiceStack.writer`): sends a write at once when the stack has the api, keeps it in
/// the outbox when the api cannot take it now (unreachable, a timeout, 5xx, 408, 429) or when the
/// stack has no api, and answers `.queued` then. Each write is a call that carries its request
/// (`ServiceCall.writing(ordering:invalidates:optimistic:precondition:)`).
///
/// | stack | the api answers | the api cannot be reached |
/// |---|---|---|
/// | `[…, api]` | `.sent` | the error |
/// | `[…, outbox, api]` | `.sent` | `.queued` |
/// | `[outbox, store]` | — | `.queued` |
public struct Writer: Sendable {
  /// The api origin writes go to (the environment in use).
  public let origin: String
  /// The cache partition they change (see `CachingLayer.partition`).
  public let partition: String
  /// How a write is sent; nil when the stack has no api.
  public let send: WriteSender?
  /// Where a write is kept; nil when the stack has no outbox.
  public let outbox: Outbox?
  /// Where its sent writes drop cached answers, and its kept ones change them.
  public let cache: (any CacheStore)?
  let warnings: Warnings

  /// A writer of these parts; `warn` hears a cache that could not be changed.
  public init(
    origin: String, partition: String, send: WriteSender?, outbox: Outbox?,
    cache: (any CacheStore)?, warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.origin = origin
    self.partition = partition
    self.send = send
    self.outbox = outbox
    self.cache = cache
    self.warnings = Warnings(warn)
  }

  /// Sends `call`, or keeps it. A write goes behind any kept write of its ordering key, so writes
  /// of one key reach the api in the order they were made.
  public func write<Value>(_ call: ServiceCall<Value>) async throws -> Written<Value> {
    // Its request and idempotency key made once: the same bytes and key on every try.
    let call = call.written()
    let request = try call.recorded()
    // Taken now, from the copy the user edited: sent with every try.
    let validator = try await condition(for: call)
    guard let send else {
      guard let outbox else { throw LayerError.needsApi(what: call.summary) }
      return .queued(try await keep(call, in: outbox, ifMatch: validator))
    }
    if let outbox, try await outbox.holdsBack(orderingKey: call.orderingKey, origin: origin) {
      // The kept writes of its key go first; while any still waits, so does this one.
      _ = try await outbox.sync(origin: origin, send: send, cache: cache)
      if try await outbox.holdsBack(orderingKey: call.orderingKey, origin: origin) {
        return .queued(try await keep(call, in: outbox, ifMatch: validator))
      }
    }
    let answer: ApiResponse
    do {
      answer = try await send(
        request, idempotencyKey: call.idempotencyKey ?? "", ifMatch: validator)
    } catch let error as ApiError where error.isRefusedAnswerToATakenRequest {
      await invalidate(call.invalidates)
      return .applied(problem: clause(error))
    } catch {
      guard let outbox, Self.canWait(error) else { throw error }
      return .queued(try await keep(call, in: outbox, ifMatch: validator))
    }
    await invalidate(call.invalidates)
    // A 2xx is applied, whatever its body: a failure here would invite a second, applied write.
    do {
      guard let decode = call.decode else { throw LayerError.notAWrite(what: call.summary) }
      return .sent(try decode(answer))
    } catch {
      return .applied(problem: clause(error))
    }
  }

  /// Sends what the outbox keeps for this origin (see `Outbox.sync`); nil when the stack has no
  /// outbox or no api.
  public func sync(
    force: Bool = false, progress: (@Sendable (PendingWrite, WriteOutcome) -> Void)? = nil
  ) async throws -> SyncReport? {
    guard let outbox, let send else { return nil }
    return try await outbox.sync(
      origin: origin, send: send, cache: cache, force: force, progress: progress)
  }

  /// Resolves the kept write `id` (a conflict, usually) with `call`: the app's write made anew
  /// against the server's version (`PendingWrite.serverBody`), sent in the kept write's place
  /// in its order, with `call`'s own idempotency key, by the next sync. Nil when the outbox
  /// keeps no such write, or the stack has no outbox.
  public func resolve<Value>(_ id: Int64, with call: ServiceCall<Value>) async throws
    -> PendingWrite?
  {
    guard let outbox else { return nil }
    let call = call.written()
    return try await outbox.store.replace(
      id, request: try call.recorded(), idempotencyKey: call.idempotencyKey ?? "",
      ifMatch: try await condition(for: call), now: outbox.clock.now())
  }

  /// Resolves the conflict of the kept write `id` in its favour (`Outbox.resendOverServerVersion`):
  /// requeued against the server's version, for the next sync to send. Nil when there is no
  /// such write, or the stack has no outbox.
  public func resendOverServerVersion(_ id: Int64) async throws -> PendingWrite? {
    try await outbox?.resendOverServerVersion(id)
  }

  /// The ETag of the stored copy `call` edits (its `precondition`), as its own item answer
  /// gave it; nil when the write names none or no copy with one is stored.
  public func ifMatch<Value>(for call: ServiceCall<Value>) async -> String? {
    guard let key = call.precondition, let cache else { return nil }
    return try? await cache.entry(for: Outbox.key(key, in: partition))?.validators.etag
  }

  /// The `If-Match` `call` is sent with: nil for a write that names no precondition; for one
  /// that does, the stored copy's ETag, or `LayerError.unknownVersion` when none is stored (a
  /// copy seen only in a list, or never read): a conditional write is never sent, or kept to be
  /// sent, without its condition.
  func condition<Value>(for call: ServiceCall<Value>) async throws -> String? {
    guard let key = call.precondition else { return nil }
    guard let etag = await ifMatch(for: call) else {
      throw LayerError.unknownVersion(what: call.summary, key: key)
    }
    return etag
  }

  /// Whether a write that failed so may wait in the outbox: the api could not take it now.
  public static func canWait(_ error: any Error) -> Bool {
    if let answered = error as? HTTPFailure {
      return [408, 429].contains(answered.status) || answered.status >= 500
    }
    let failure = ServiceFailure.of(error)
    return failure == .unreachable || failure == .unavailable
  }

  private func keep<Value>(_ call: ServiceCall<Value>, in outbox: Outbox, ifMatch: String?)
    async throws -> PendingWrite
  {
    // The edited copies are made first: the write keeps what each edit changed (undoing
    // another write of the copy makes it again); they are stored once the write is kept.
    var edited: [String: CacheEntry] = [:]
    var changes: [String: JSONValue] = [:]
    for edit in call.optimistic {
      guard let cache else { break }
      let key = Outbox.key(edit.key, in: partition)
      do {
        var found = edited[key]
        if found == nil { found = try await cache.entry(for: key) }
        guard let stored = found else { continue }
        var entry = stored
        // The api's copy under the first edit: what undoing the write puts back.
        if !entry.isPending { entry.original = entry.payload }
        entry.payload = try edit.apply(entry.payload)
        entry.isPending = true
        if let before = try? JSONDecoder().decode(JSONValue.self, from: stored.payload),
          let after = try? JSONDecoder().decode(JSONValue.self, from: entry.payload)
        {
          let change = JSONValue.mergePatch(from: before, to: after)
          changes[edit.key] = changes[edit.key].map { $0.applying(mergePatch: change) } ?? change
        }
        edited[key] = entry
      } catch {
        unshown(edit.key, call.summary, error)
      }
    }
    let kept = try await outbox.keep(
      call, origin: origin, partition: partition, ifMatch: ifMatch, edits: changes)
    // After the write is kept, in one transaction: a run stopped between the two leaves a kept
    // write whose edit is not shown, which the next run makes again (`Outbox.reconcile`).
    do { try await cache?.store(edited.values.sorted { $0.key < $1.key }) } catch {
      unshown(edited.keys.sorted().joined(separator: ", "), call.summary, error)
    }
    return kept
  }

  private func unshown(_ key: String, _ summary: String, _ error: any Error) {
    warnings.warn(
      "The cached copy \(key) could not show \(summary) (\(error)); it shows the api's last answer."
    )
  }

  /// What the api took makes stale: an entity is marked so (the next network read refreshes
  /// it; every answer holding it still shows it), an answer stored whole is dropped.
  private func invalidate(_ keys: [String]) async {
    guard let cache else { return }
    for key in keys {
      let remaining = (try? await outbox?.store.writes(editing: key, partition: partition)) ?? []
      let settlement = EditSettlement(
        taken: true, remaining: remaining.compactMap { $0.edits[key] })
      do { try await cache.settleEdit(of: Outbox.key(key, in: partition), settlement) } catch {
        warnings.warn("The cached copy \(key) could not be dropped (\(error)); it may be stale.")
      }
    }
  }
}

extension ServiceCall {
  /// The request a write sends and keeps: its route, recorded. A call without one (a call only
  /// the store answers) cannot be written.
  func recorded() throws -> Data {
    guard let route else { throw LayerError.notAWrite(what: summary) }
    return try route.recorded()
  }

  /// Writes of one ordering key go in the order they were made: `ordering`, else its route's
  /// path.
  var orderingKey: String { ordering ?? route?.path ?? key }
}

/// The outbox as a layer of a service's stack, so its reads and writes are configured in one
/// place (`movies: [logging, "cache(networkFirst)", outbox, api]`): reads pass through it (a
/// kept write's edit already shows in the store below), and the stack's writes
/// (`ServiceStack.write(_:)`) are kept in its outbox when the api cannot take them — or always,
/// on a stack with no api (`[outbox, store]`: the offline profile). A stack without it sends each
/// write or fails.
package struct OutboxLayer: ServiceLayer {
  /// Where writes are kept.
  public let outbox: Outbox
  /// The origin of the environment in use, which its kept writes are sent to.
  public let origin: String
  /// The cache partition its writes' edits and invalidations apply in.
  public let partition: String
  let warn: @Sendable (String) -> Void

  /// Keeps writes in `outbox` for `origin`, in `partition`; `warn` hears what a write could not
  /// do beside its answer (an edit that could not be shown).
  public init(
    outbox: Outbox, origin: String, partition: String,
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.outbox = outbox
    self.origin = origin
    self.partition = partition
    self.warn = warn
  }

  /// A read goes on down: the outbox answers writes only.
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    try await next()
  }
}
