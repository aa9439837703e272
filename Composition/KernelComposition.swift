import Api
import Domain
import Foundation
import Injection
import Layers
import Store
import Synchronization

/// What a run adds to the configuration: where data lives, what the command line chose, and
/// where logs and warnings go.
public struct Runtime: Sendable {
  public var dataDirectory: URL
  /// `--environment`, overriding the saved and the configured one.
  public var environment: String?
  /// `--base-url`, overriding the chosen environment's base URL.
  public var baseURL: String?
  public var log: @Sendable (String) -> Void
  public var warn: @Sendable (String) -> Void

  public init(
    dataDirectory: URL, environment: String? = nil, baseURL: String? = nil,
    log: @escaping @Sendable (String) -> Void = { _ in },
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.dataDirectory = dataDirectory
    self.environment = environment
    self.baseURL = baseURL
    self.log = log
    self.warn = warn
  }
}

/// The composition root: the only place that names concrete types. It registers what a
/// profile's stacks need, and nothing else (the offline profile gets no transport at all).
public enum KernelComposition {
  /// A validated, bootstrapped container for `profile` (the config's default when nil).
  public static func bootstrap(config: KernelConfig, profile: String? = nil, runtime: Runtime)
    throws -> Container
  {
    let container = try compose(config: config, profile: profile, runtime: runtime)
    try container.validate()
    try container.bootstrap()
    return container
  }

  /// The api side alone, whatever the profile's stack: environments, context, transport, auth.
  /// `kernel auth` and `kernel env` use it, so they work under any profile.
  public static func bootstrapApi(config: KernelConfig, runtime: Runtime) throws -> Container {
    let container = Container()
    try container.register(Runtime.self, scope: .singleton) { _ in runtime }
    try registerTime(in: container)
    try registerApi(config, runtime, in: container)
    try container.validate()
    try container.bootstrap()
    return container
  }

  /// The registrations for `profile`, not yet validated: tests override parts of it in a child.
  public static func compose(config: KernelConfig, profile: String? = nil, runtime: Runtime) throws
    -> Container
  {
    let name = profile ?? config.profile
    guard let chosen = config.profiles[name] else {
      throw ConfigError.unknownName(
        file: config.file, key: "profile", name: name, valid: config.profiles.keys.sorted())
    }
    let stack = try StackEntry.parseStack(
      chosen.movies, file: config.file, key: "profiles.\(name).movies")
    let container = Container()
    try container.register(Runtime.self, scope: .singleton) { _ in runtime }
    try registerTime(in: container)
    if stack.source == .api { try registerApi(config, runtime, in: container) }
    if stack.usesStore { try registerCache(stack, runtime, in: container) }
    try registerMovies(stack, in: container)
    return container
  }

  /// The cache store in the data dir, shared by every caching layer, and the work they leave
  /// behind an answer. A cache that cannot be opened fails a store-only stack with its own
  /// sentence (exit 78); a stack with the api underneath warns once and answers without it.
  private static func registerCache(
    _ stack: StackEntry.Stack, _ runtime: Runtime, in container: Container
  ) throws {
    try container.register(BackgroundWork.self, scope: .singleton) { _ in BackgroundWork() }
    let opening = CacheOpening(
      file: runtime.dataDirectory.appendingPathComponent("cache.sqlite"), warn: runtime.warn)
    try container.register((any CacheStore).self, scope: .singleton) { _ in
      do {
        return try opening.store()
      } catch let error as StoreError where stack.source == .api {
        return UnavailableCacheStore(reason: error, warn: runtime.warn)
      }
    }
    // Opened when `cache stats` or `cache clear` asks, so a broken cache fails those, not the
    // validation of a stack that can do without it.
    try container.register((any CacheMaintenance).self, scope: .singleton) { _ in opening }
  }

  /// The clock every delay, timeout and duration is measured on, the calendar time cache ages
  /// are measured against, and the source of jitter: dependencies like any other, so a test
  /// overrides them in a child container.
  private static func registerTime(in container: Container) throws {
    try container.register((any Clock<Duration>).self, scope: .singleton) { _ in ContinuousClock() }
    try container.register(RandomSource.self, scope: .singleton) { _ in .system }
    try container.register(WallClock.self, scope: .singleton) { _ in .system }
  }

  // MARK: The api side

  private static func registerApi(
    _ config: KernelConfig, _ runtime: Runtime, in container: Container
  ) throws {
    let environments = try environments(config)
    let configured = try chosenEnvironment(config, runtime)
    try container.register(ApiEnvironment.self, scope: .singleton) { _ in configured }
    let adapters = try config.adapters.enumerated().map {
      try adapter($0.element, config, key: "adapters[\($0.offset)]")
    }
    let retriers = try config.retriers.enumerated().map {
      try retrier($0.element, config, key: "retriers[\($0.offset)]")
    }

    try container.register((any ApiContext).self, scope: .singleton) { r in
      let configured = try r.resolve(ApiEnvironment.self)
      switch config.context {
      case .memory:
        return InMemoryApiContext(environment: configured)
      case .persistent:
        let context = try PersistentApiContext(
          file: runtime.dataDirectory.appendingPathComponent("context.json"),
          defaultEnvironment: try environment(config.environment, in: config, runtime: nil),
          environments: environments, warn: runtime.warn)
        // --environment and --base-url win over the saved environment, for this run only;
        // --base-url alone replaces the base URL of the saved one.
        if runtime.environment != nil {
          context.override(with: configured)
        } else if runtime.baseURL != nil {
          context.override(
            with: try environment(context.environment.name, in: config, runtime: runtime))
        }
        return context
      }
    }
    try container.register((any Transport).self, scope: .singleton) { r in
      // The sample environment is answered in process, unless its URL was replaced.
      let current = try r.resolve((any ApiContext).self).environment
      if current.name == "sample" && runtime.baseURL == nil {
        return InProcessTransport.sample()
      }
      var transport = URLSessionTransport.Configuration()
      transport.requestTimeout = .seconds(config.timeouts.requestSeconds)
      transport.resourceTimeout = .seconds(config.timeouts.resourceSeconds)
      transport.credentialHeaders = Set(environments.map(\.tokenHeader))
      return URLSessionTransport(configuration: transport, clock: try r.resolve())
    }
    try container.register(ApiClient.self, scope: .singleton) { r in
      let clock = try r.resolve((any Clock<Duration>).self)
      let random = try r.resolve(RandomSource.self)
      let wall = try r.resolve(WallClock.self)
      return ApiClient(
        context: try r.resolve(), transport: try r.resolve(), adapters: adapters,
        retriers: retriers.map { $0(Timing(clock: clock, random: random, wall: wall)) },
        clock: clock,
        trace: try r.resolve(Runtime.self).log)
    }
    try container.register((any AuthService).self, scope: .singleton) { r in
      ApiAuthService(client: try r.resolve())
    }
  }

  /// The environment a run uses: `--environment`, else the configured default; `--base-url`
  /// replaces its base URL.
  static func chosenEnvironment(_ config: KernelConfig, _ runtime: Runtime) throws -> ApiEnvironment
  {
    try environment(runtime.environment ?? config.environment, in: config, runtime: runtime)
  }

  /// The environments the config defines, as the api sees them.
  public static func environments(_ config: KernelConfig) throws -> [ApiEnvironment] {
    try config.environments.keys.sorted().map { try environment($0, in: config, runtime: nil) }
  }

  static func environment(_ name: String, in config: KernelConfig, runtime: Runtime?) throws
    -> ApiEnvironment
  {
    guard let described = config.environments[name] else {
      throw ConfigError.unknownName(
        file: config.file, key: "environment", name: name, valid: config.environments.keys.sorted())
    }
    do {
      return try ApiEnvironment(
        name: name, baseURL: runtime?.baseURL ?? described.baseURL,
        tokenHeader: described.tokenHeader,
        tokenScheme: described.tokenScheme, allowsInsecureHTTP: described.insecure)
    } catch let error as ApiError {
      throw ConfigError.invalidEnvironment(
        file: config.file, key: "environments.\(name).baseURL", reason: error.description)
    }
  }

  private static func adapter(_ name: String, _ config: KernelConfig, key: String) throws
    -> any RequestAdapter
  {
    switch name {
    case "defaultHeaders": return .defaultHeaders
    case "authToken": return .authToken
    default:
      throw ConfigError.unknownName(
        file: config.file, key: key, name: name, valid: ["authToken", "defaultHeaders"])
    }
  }

  /// What a retrier may take from the container: clocks and jitter.
  private struct Timing {
    let clock: any Clock<Duration>
    let random: RandomSource
    let wall: WallClock
  }

  /// A retrier named in the config, made once its timing is resolved.
  private typealias RetrierFactory = @Sendable (Timing) -> any RequestRetrier

  private static func retrier(_ name: String, _ config: KernelConfig, key: String) throws
    -> RetrierFactory
  {
    switch name {
    case "authRefresh": return { timing in .authRefresh(clock: timing.clock) }
    case "backoff":
      var policy = BackoffRetrier.Policy()
      policy.maxRetries = config.retry.maxRetries
      policy.baseDelay = .milliseconds(config.retry.baseDelayMs)
      policy.retryAfterCap = .seconds(config.retry.retryAfterCapSeconds)
      return { [policy] timing in
        BackoffRetrier(policy: policy, random: timing.random, now: timing.wall.now)
      }
    default:
      throw ConfigError.unknownName(
        file: config.file, key: key, name: name, valid: ["authRefresh", "backoff"])
    }
  }

  // MARK: The movie stack

  /// Registers the stack's source as `MovieService`, then one decorator holding every layer of
  /// the stack, the first named outermost: one stack per service, applied once per call.
  private static func registerMovies(_ stack: StackEntry.Stack, in container: Container) throws {
    switch stack.source {
    case .api:
      try container.register((any MovieService).self, scope: .singleton) { r in
        ApiMovieService(client: try r.resolve())
      }
    case .store: break
    }
    let layers = stack.source == .store ? stack.layers + [.cache(.cacheOnly)] : stack.layers
    guard !layers.isEmpty else { return }
    let build: @Sendable (Resolver) throws -> [any ServiceLayer] = { r in
      try layers.map { try layer($0, r) }
    }
    if stack.source == .store {
      try container.register((any MovieService).self, scope: .singleton) { r in
        LayeredMovieService(base: nil, layers: try build(r))
      }
    } else {
      try container.decorate((any MovieService).self) { r, base in
        LayeredMovieService(base: base, layers: try build(r))
      }
    }
  }

  private static func layer(_ entry: StackEntry.Layer, _ r: Resolver) throws -> any ServiceLayer {
    switch entry {
    case .logging: LoggingLayer(log: try r.resolve(Runtime.self).log, clock: try r.resolve())
    case .dedupe: DedupeLayer()
    case .memory(let capacity, let seconds):
      MemoryLayer(capacity: capacity, maxAge: .seconds(seconds), clock: try r.resolve())
    case .cache(let policy):
      CachingLayer(
        store: try r.resolve(), policy: policy, clock: try r.resolve(),
        background: try r.resolve(), warn: try r.resolve(Runtime.self).warn)
    }
  }
}

/// Opens the cache file once, whoever asks first, and keeps the store or the failure: a
/// cache that cannot be opened is tried, and reported, once per run.
final class CacheOpening: Sendable {
  private let file: URL
  private let warn: @Sendable (String) -> Void
  private let opened = Mutex<Result<SQLiteCacheStore, StoreError>?>(nil)

  init(file: URL, warn: @escaping @Sendable (String) -> Void) {
    self.file = file
    self.warn = warn
  }

  func store() throws(StoreError) -> SQLiteCacheStore {
    let result = opened.withLock { opened in
      if let opened { return opened }
      let result: Result<SQLiteCacheStore, StoreError>
      do {
        result = .success(try SQLiteCacheStore.open(at: file, warn: warn))
      } catch let error as StoreError {
        result = .failure(error)
      } catch {
        result = .failure(
          .unusable(
            file: file.path, cause: "\(error)", fix: "move it aside or choose another --data-dir"))
      }
      opened = result
      return result
    }
    return try result.get()
  }
}

extension CacheOpening: CacheMaintenance {
  func statistics() async throws -> CacheStatistics { try await store().statistics() }
  func clear() async throws -> Int { try await store().clear() }
}

/// Stands in for a cache that could not be opened, under a stack that can answer without it:
/// the first call that looks in it warns (once), every read finds nothing, writes are dropped.
final class UnavailableCacheStore: CacheStore {
  let reason: StoreError
  private let warn: @Sendable (String) -> Void
  private let warned = Mutex(false)

  init(reason: StoreError, warn: @escaping @Sendable (String) -> Void) {
    self.reason = reason
    self.warn = warn
  }

  func entry(for key: String) async throws -> CacheEntry? {
    let first = warned.withLock { warned in
      defer { warned = true }
      return !warned
    }
    if first { warn("\(reason) Answering from the api without the cache.") }
    return nil
  }

  func store(_ entry: CacheEntry) async throws {}
  func renew(_ key: String, storedAt: Date, validators: CacheValidators) async throws {}
}
