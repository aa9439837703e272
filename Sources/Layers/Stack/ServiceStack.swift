import Api
import Domain
import Foundation

/// The profile's stack for one service: its layers over the api client the config gives it (or
/// over nothing: the store alone), running any call that carries its request. Nothing is
/// written per call: a call declared once (`ServiceCall(_:entities:local:stored:)`) is answered
/// and watched by whichever stack the profile names for its service.
///
/// ```swift
/// let books = try composed.stack("books")  // [logging, "cache(networkFirst)", api]
/// let book = try await books.answer(.book(id: 1))
/// for await element in books.watch(.shelf) ?? AsyncStream { $0.finish() } { … }
/// ```
///
/// A service protocol is optional: an app that wants one for test doubles writes a small
/// struct over its stack; doubles may also sit at the transport (`InProcessTransport`).
public struct ServiceStack: Sendable {
  /// The api client under the layers (offered each call's stored validators), or nil: a
  /// store-only stack (the offline profile), where a call no layer answers is a `LayerError.miss`.
  public let client: ApiClient?
  /// The layers the profile names.
  public var layers: LayerStack

  /// `layers` over `client` (each call offered its stored copy's validators), or over nothing:
  /// `client` nil is the store alone.
  public init(client: ApiClient?, layers: [any ServiceLayer]) {
    self.client = client
    self.layers = LayerStack(layers)
  }

  /// `call`'s answer — its value, where it came from (`network`, `cache`, `pending`, `local`),
  /// how old it is and its validators — through the layers down to its request when none
  /// answers it. A call that carries no request is answered by the layers alone (the store), as
  /// under the offline profile. `early` hears the stored copy first, the moment it is read
  /// (a `cacheThenNetwork` command prints it while the api is asked).
  ///
  /// ```swift
  /// let book = try await books.answer(.book(id: 1))
  /// print(book.value.title, book.origin)  // Middlemarch cache
  /// ```
  public func answer<Value: Sendable>(
    _ call: ServiceCall<Value>, early: (@Sendable (Answer<Value>) -> Void)? = nil
  ) async throws -> Answer<Value> {
    if let early, let stored = try? await layers.stored(call) { early(stored) }
    return try await layers.answer(call, client: client)
  }

  /// `call`'s answers as its stored data changes (see `LayerStack.watch`), refreshed from the
  /// api once when `refresh` and the stack has one; nil when the stack stores nothing (no
  /// caching layer: an api-only profile), so there is nothing to watch.
  public func watch<Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, refresh: Bool = true
  ) -> AsyncStream<Watched<Value>>? {
    guard layers.layers.contains(where: { $0 is CachingLayer }) else { return nil }
    return layers.watch(call, client: client, refresh: refresh)
  }

  /// `call` written through this stack: sent through the api at once, or kept in the outbox
  /// when the api cannot take it (a stack with an `OutboxLayer` over the api), or kept (an
  /// outbox over the store alone), or sent or failed (no outbox); see `Writer`. Its optimistic
  /// edits show in the stack's cache as it is kept.
  public func write<Value>(_ call: ServiceCall<Value>) async throws -> Written<Value> {
    try await writer.write(call)
  }

  /// `call`'s answer streamed to `file` through the stack's api client (`ApiClient.download`:
  /// to a partial file beside it, resumed, moved into place when whole), `progress` told as it
  /// comes; nil when the stack has no api (the store alone keeps no downloads) or the call
  /// carries no request. The layers keep no file: a download is never cached.
  public func download<Value: Sendable>(
    _ call: ServiceCall<Value>, to file: URL,
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) async throws -> Response<URL>? {
    guard let route = call.route, let client else { return nil }
    return try await client.download(route, to: file, progress: progress)
  }

  /// Brings the stack's store up to date with `feed`: asks its route from the token kept in
  /// the caching layer's partition (from the start when none is), applies each page in one
  /// transaction with the page's token (`CacheStore.apply`), and asks again while the feed says
  /// there is more; `progress` hears the running summary after each page. A sync stopped at
  /// any point goes on from the last page applied. A page is applied only while the stored
  /// token is still the one it was asked with: two syncs at once (two runs) never apply an
  /// older page over a newer one, the one that finds the token moved goes on from there, and
  /// each counts the pages it applied. A feed that says it has more but gives no new token to
  /// ask for it is bad data (`ApiError.decoding`), its pages so far applied but the collection
  /// not said to be complete. Throws `LayerError.syncNeedsApi` or
  /// `syncNeedsStore` when the stack has no api or no caching layer: there is nothing to sync
  /// from, or into.
  ///
  /// ```swift
  /// let summary = try await composed.stack("books").sync(.books)
  /// print(summary)  // +12 ~3 -2 books
  /// ```
  public func sync(
    _ feed: ChangesFeed, progress: (@Sendable (SyncSummary) -> Void)? = nil
  ) async throws -> SyncSummary {
    let cache: CachingLayer? = layers.layers.lazy.compactMap { $0 as? CachingLayer }.first
    guard let client else { throw LayerError.syncNeedsApi(feed: feed.name) }
    guard let cache else { throw LayerError.syncNeedsStore(feed: feed.name) }
    let tokenKey = cache.storeKey(feed.key)
    var summary = SyncSummary(name: feed.name)
    let scope = cache.scope(ofType: feed.type)
    // The keys of the feed's own entities this sync touched: true while the feed has it.
    var delivered: [String: Bool] = [:]
    let stored = { StoredChanges.token(of: try await cache.store.entry(for: tokenKey)) }
    summary.token = try await stored()
    if summary.token == nil { try await cache.markSyncing(type: feed.type, at: Date()) }
    while true {
      let route = feed.route(summary.token)
      let page = try feed.read(try await client.response(for: route).body, route)
      let now = Date()
      // The feed's own entities whole, as the api has them; those they hold merged into theirs.
      let entities = (page.created + page.updated).map { entity in
        cache.row(
          of: entity, type: feed.type, modelVersion: feed.modelVersion, whole: true, at: now)
      }
      let gone = page.deleted.map {
        cache.storeKey(EntityShape<Never>.key(type: feed.type, id: $0))
      }
      let (asked, token) = (summary.token, page.token ?? summary.token)
      let applied = try await cache.store.apply(
        StoredChanges(
          entities: entities, gone: gone, goneAt: now,
          token: CacheEntry(key: tokenKey, payload: Data((token ?? "").utf8), storedAt: now),
          asked: asked))
      guard applied else {
        // Another sync (another run) applied pages meanwhile: this one goes on from where that
        // one got to, its page left unapplied, so an older page never lands over a newer one.
        let moved = try await stored()
        // Unmoved, the store wrote nothing (it could not be opened): nothing to claim.
        guard moved != asked else { return summary }
        summary.token = moved
        continue
      }
      for entity in entities where entity.scope == scope { delivered[entity.key] = true }
      for key in gone { delivered[key] = false }
      summary.created += page.created.count { $0.held == nil }
      summary.updated += page.updated.count { $0.held == nil }
      summary.deleted += page.deleted.count
      summary.pages += 1
      summary.token = token
      progress?(summary)
      guard page.hasMore else { break }
      // A feed that says there is more but gives no new token would be asked the same for
      // ever: what it gave is kept, and the collection is not said to be complete.
      guard let next = page.token, next != asked else {
        throw ApiError.decoding(
          route: route, field: "",
          reason: "it says there is more, but gives "
            + (page.token.map { "the token it was asked with (\($0))" } ?? "no token")
            + " to ask for it; what it gave until then is kept")
      }
    }
    // Its last page applied, the store holds every entity of the type the api has: local
    // queries of it say so (`Answer.isComplete`).
    try await cache.markComplete(
      type: feed.type, delivered: delivered.filter(\.value).map(\.key),
      gone: Set(delivered.filter { !$0.value }.map(\.key)), at: Date())
    return summary
  }

  /// The writer this stack is: its outbox layer's outbox, its api, its caching layer's store.
  public var writer: Writer {
    let kept: OutboxLayer? = layers.layers.lazy.compactMap { $0 as? OutboxLayer }.first
    let cache: CachingLayer? = layers.layers.lazy.compactMap { $0 as? CachingLayer }.first
    let send: WriteSender? = client.map { WriteSender.api($0) }
    let origin = kept?.origin ?? client.map { "\($0.context.environment.origin)" } ?? ""
    let partition = kept?.partition ?? cache?.partition ?? ""
    guard let kept else {
      return Writer(
        origin: origin, partition: partition, send: send, outbox: nil, cache: cache?.store)
    }
    return Writer(
      origin: origin, partition: partition, send: send, outbox: kept.outbox, cache: cache?.store,
      warn: kept.warn)
  }
}
