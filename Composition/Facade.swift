import Api
import Domain
import Foundation
import Injection
import Layers

/// One profile's object graph, as `KernelApp.compose` builds it for the command front, a test
/// or an app: the app's services by type, the graph, the cache's upkeep, the work left behind
/// answers, and the api side (`api()`) for login and environments.
public struct Composed: Sendable {
  /// The validated container: a test resolves Kernel's parts from it directly.
  public let container: Container
  let composer: Composer
  let profileHasApi: Bool
  let profileHasOutbox: Bool
  /// The profile this graph was built for.
  public let profile: String
  /// Whether the profile's stacks send requests to the api (`api` and `layered`, not
  /// `offline`): what a download, which no cache answers, needs.
  public var reachesApi: Bool { profileHasApi }
  let overriding: (@Sendable (Container) throws -> Void)?

  /// Whether the config's api context keeps the environment and the token in the data dir
  /// (the catalog says so of the context it registered).
  public var contextPersists: Bool {
    composer.app.catalog.contexts[composer.config.context]?.persists ?? false
  }

  /// The api side (environments, context, transport, client, auth): this graph's own when the
  /// profile's stacks send requests, else one composed for it alone (with the same overrides),
  /// so `auth` and `env` work under any profile.
  package func api() throws -> ApiAccess {
    let all = try Composer.environments(composer.config)
    let catalog = composer.app.catalog
    let config = composer.config
    let container =
      profileHasApi
      ? container : try KernelApp.started(composer.composeApi(), overriding: overriding)
    // The one in use as this run has it: a --base-url over its own sends over http.
    let current = try container.resolve((any ApiContext).self).environment
    let replaced = composer.runtime.baseURL != nil
    return ApiAccess(
      container: container, all: all, contextPersists: contextPersists,
      environments: all.map { configured in
        let isCurrent = configured.name == current.name
        let environment = isCurrent ? current : configured
        let transport = config.environments[environment.name]?.transport ?? "http"
        return (
          environment.name, environment.displayURL,
          !(isCurrent && replaced) && catalog.transports[transport]?.answersInProcess ?? false,
          environment.storeRoot
        )
      })
  }

  /// The profile's `Service` (`(any BookService).self`), built on first use.
  public func service<Service: Sendable>(_ type: Service.Type) throws -> Service {
    try container.resolve(type)
  }

  /// The profile's `Service` registered under `tag` (a service the catalog took with a tag: one
  /// of several of the same type, as `Catalog.service(_:)` registers each `ServiceStack`).
  public func service<Service: Sendable>(_ type: Service.Type, tag: String) throws -> Service {
    try container.resolve(type, tag: Tag(tag))
  }

  /// The profile's stack for the service `key` (`Catalog.service(_:)`), built on first use:
  /// it answers, watches, writes and downloads any call that carries its request.
  ///
  /// ```swift
  /// let book = try await composed.stack("books").answer(.book(id: 1))
  /// ```
  public func stack(_ key: String) throws -> ServiceStack {
    try service(ServiceStack.self, tag: key)
  }

  /// The stacks the profile names among `keys`, by key: those a generated client's operations
  /// have of their own (`KernelTransport(_:operations:)`); a key it does not stack is left out.
  public func stacks(named keys: [String]) throws -> [String: ServiceStack] {
    var found: [String: ServiceStack] = [:]
    for key in keys where stacks(key) { found[key] = try stack(key) }
    return found
  }

  /// Brings the store up to date with every changes feed the app registered
  /// (`Catalog.feed(_:of:)`) whose service this profile stacks, in turn, through its stack
  /// (`ServiceStack.sync`); `progress` hears each feed's running summary. What `kernel sync`
  /// runs.
  public func sync(
    progress: (@Sendable (SyncSummary) -> Void)? = nil
  ) async throws -> [SyncSummary] {
    var summaries: [SyncSummary] = []
    let feeds = composer.app.catalog.feeds.filter { stacks($0.service) }
    // A sync keeps what it is told: a cache that cannot be opened fails it before any request,
    // where a read only warns and answers from the api.
    if !feeds.isEmpty,
      let cache = try? container.resolve((any CacheMaintenance).self) as? CacheOpening
    {
      _ = try cache.store()
    }
    for (service, feed) in feeds {
      summaries.append(try await stack(service).sync(feed, progress: progress))
    }
    return summaries
  }

  /// Whether the profile's config stacks the service `key` (`profiles.layered.books`).
  public func stacks(_ key: String) -> Bool {
    composer.config.profiles[profile]?.stacks[key] != nil
  }

  /// Drops what the session built (the transport, the api client, the services over them),
  /// for an app that stays running across a logout or a change of environment: the next
  /// `service(_:)` builds them anew.
  public func endSession() { container.reset(.session) }

  /// Runs `body` with the profile's container current (`Container.current`), so app code
  /// using `@Injected` resolves from it; a command front runs each command's work so.
  public func makeCurrent<R>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
  ) async rethrows -> R {
    try await container.makeCurrent(body)
  }

  /// How many registrations the container holds.
  public var registrationCount: Int { container.registrations.count }

  /// Checks that the current environment's transport can send from this system (libcurl can
  /// be loaded, for HTTP on Linux), sending nothing; says which transport it is.
  public func checkTransport() throws -> String {
    let transport = try container.resolve((any Transport).self)
    let environment = try container.resolve((any ApiContext).self).environment
    do { try transport.checkAvailability() } catch TransportError.unavailable(let reason) {
      throw TransportUnavailable(environment: environment.name, reason: reason)
    }
    return "\(type(of: transport)) can send to \(environment.name)"
  }

  /// The dependency graph: `text`, `dot` or `mermaid`.
  public func graph(_ format: String) -> String? {
    DependencyGraph.Format(rawValue: format).map { container.graph.rendered(as: $0) }
  }

  /// What the profile's cache holds; nil when no stack of the profile keeps one. Reading it
  /// creates no file.
  public func cacheStatistics() async throws -> CacheStatistics? {
    guard let maintenance = try? container.resolve((any CacheMaintenance).self) else { return nil }
    return try await maintenance.statistics()
  }

  /// The stored rows of each registered entity type (`Catalog.entity(_:type:)`) that no longer
  /// read as its model (`CacheStatistics.olderModelRows(current:)`): `["Movie": 12]`.
  public func olderModelRows(in statistics: CacheStatistics) -> [String: Int] {
    statistics.olderModelRows(current: composer.app.catalog.models)
  }

  /// The stored rows of each registered entity type that are of a version it reads and still
  /// do not read as it (`EntityShape.damaged(_:)`): `["Movie": 1]`, damaged by another program,
  /// or written by a model that changed without a new `StoredModel.modelVersion`. Offline
  /// answers leave them out, saying so; a network profile stores them anew. It decodes every
  /// stored entity, so it is `doctor`'s check, not every run's.
  public func damagedModelRows(in statistics: CacheStatistics) async throws -> [String: Int] {
    guard let store = try? container.resolve((any CacheStore).self) else { return [:] }
    var damaged: [String: Int] = [:]
    for scope in statistics.entityScopes.sorted() {
      let type = CacheStatistics.type(ofScope: scope)
      guard let count = composer.app.catalog.parts.damaged[type] else { continue }
      let rows = try await store.query(scope: scope, LocalQuery(summary: "every stored \(type)"))
      let found = count(rows.filter { !$0.isGone })
      if found > 0 { damaged[type, default: 0] += found }
    }
    return damaged
  }

  /// Empties the profile's cache, or only what the environment at `origin` answered (an
  /// `ApiAccess.environments` origin: its origin and base path), but the entities showing an
  /// edit not yet sent (`CacheMaintenance.clear(origin:)`); how many answers went, nil when it
  /// keeps none.
  public func clearCache(origin: String? = nil) async throws -> Int? {
    guard let maintenance = try? container.resolve((any CacheMaintenance).self) else { return nil }
    return try await maintenance.clear(origin: origin)
  }

  // MARK: The outbox

  /// The writes the outbox keeps, oldest first: `[]` when it has none yet (no file is made to
  /// say so), nil when no stack of the profile names `outbox`.
  public func keptWrites() async throws -> [PendingWrite]? {
    guard profileHasOutbox else { return nil }
    guard FileManager.default.fileExists(atPath: composer.outboxFile.path) else { return [] }
    return try await container.resolve(Outbox.self).store.writes()
  }

  /// Sends the kept writes of the environment in use through the api client (the profile's, or
  /// one composed for it when its stacks send nothing), in order per ordering key; `force`
  /// sends those waiting out a backoff too. Nil when the profile keeps no outbox; an empty
  /// report when it has none yet.
  public func syncOutbox(
    force: Bool, progress: (@Sendable (PendingWrite, WriteOutcome) -> Void)? = nil
  ) async throws -> SyncReport? {
    guard profileHasOutbox else { return nil }
    guard FileManager.default.fileExists(atPath: composer.outboxFile.path) else {
      return SyncReport()
    }
    let outbox = try container.resolve(Outbox.self)
    let api = try api().container
    let client = try api.resolve(ApiClient.self)
    return try await outbox.sync(
      origin: client.context.environment.origin.description, send: .api(client),
      cache: try? container.resolve((any CacheStore).self), force: force, progress: progress)
  }

  /// Makes the stored copies show what the kept writes make of the api's copies
  /// (`Outbox.reconcile`): an edit no kept write stands behind is undone (the outbox file was
  /// removed, or replaced by an older copy), and a kept write's edit a stopped run did not store
  /// is made again. The keys undone and redone; none when the profile keeps no outbox or no
  /// cache, or there is neither an outbox file nor a copy with an edit pending (an indexed read
  /// and a `stat`: the outbox is opened only when there is one).
  public func reconcileEdits() async throws -> (undone: [String], redone: [String]) {
    guard profileHasOutbox, let cache = try? container.resolve((any CacheStore).self) else {
      return ([], [])
    }
    let hasOutbox = FileManager.default.fileExists(atPath: composer.outboxFile.path)
    if !hasOutbox, try await cache.pendingKeys().isEmpty { return ([], []) }
    let kept = try await keptWrites() ?? []
    return try await container.resolve(Outbox.self).reconcile(cache, writes: kept)
  }

  /// Sends the kept writes that are due, when the profile's stacks reach the api and keep an
  /// outbox: what a run does before its command. Nil when there is nothing to do.
  public func syncDueWrites() async throws -> SyncReport? {
    guard mayHaveDueWrites else { return nil }
    return try await syncOutbox(force: false)
  }

  /// Whether the profile's stacks reach the api and keep an outbox, and its file exists: when
  /// not, `syncDueWrites` has nothing to do, and a command need not set a deadline for it.
  public var mayHaveDueWrites: Bool {
    profileHasApi && profileHasOutbox
      && FileManager.default.fileExists(atPath: composer.outboxFile.path)
  }

  /// Makes the kept write `id` pending and due now (a conflict or a rejection sent again as it
  /// is); nil when there is none.
  public func retryWrite(_ id: Int64) async throws -> PendingWrite? {
    guard let writes = try await keptWrites(), writes.contains(where: { $0.id == id }) else {
      return nil
    }
    let outbox = try container.resolve(Outbox.self)
    return try await outbox.store.retry(id, now: outbox.clock.now())
  }

  /// Requeues the kept write `id` against the server's version (`Outbox.resendOverServerVersion`:
  /// its `If-Match` the ETag its conflict answered with); nil when there is none.
  public func resolveWrite(_ id: Int64) async throws -> PendingWrite? {
    guard let writes = try await keptWrites(), writes.contains(where: { $0.id == id }) else {
      return nil
    }
    return try await container.resolve(Outbox.self).resendOverServerVersion(id)
  }

  /// Removes the kept write `id` (it will never be sent); nil when there is none.
  public func dropWrite(_ id: Int64) async throws -> PendingWrite? {
    guard let writes = try await keptWrites(), writes.contains(where: { $0.id == id }) else {
      return nil
    }
    return try await container.resolve(Outbox.self).drop(
      id, cache: try? container.resolve((any CacheStore).self))
  }

  /// Refreshes a cache started behind its answers and not yet stored.
  public var pendingWork: Int { (try? container.resolve(BackgroundWork.self))?.pending ?? 0 }

  /// Waits for that work, at most `limit`; false when it had to be cancelled.
  public func settle(within limit: Duration) async -> Bool {
    guard let work = try? container.resolve(BackgroundWork.self) else { return true }
    return await work.settle(within: limit)
  }
}

extension KernelApp {
  /// The error to report for `error`: a failed resolve's one root cause, else the error.
  /// A wrapper's cause (`WrappingError`, as a generated OpenAPI client's `ClientError` is made
  /// one by KernelOpenAPI) is unwrapped too, so its own sentence and exit code are reported.
  public static func rootCause(of error: any Error) -> any Error {
    var cause = (error as? InjectionError)?.rootCause ?? error
    while let wrapper = cause as? any WrappingError { cause = wrapper.wrapped }
    return cause
  }
}

/// The transport an environment needs cannot work on this system (exit 69).
struct TransportUnavailable: Error, ClassifiedError, CustomStringConvertible {
  let environment: String
  let reason: String
  var failure: ServiceFailure { .unavailable }
  var description: String {
    "Requests to environment \(environment) cannot be sent: \(reason)."
  }
}

extension Container {
  /// The stack this container built for the service `key` (`Catalog.service(_:)`): what a
  /// test holding a composed container asks its calls of.
  ///
  /// ```swift
  /// let book = try await container.stack("books").answer(.book(id: 1))
  /// ```
  public func stack(_ key: String) throws -> ServiceStack {
    try resolve(ServiceStack.self, tag: Tag(key))
  }
}
