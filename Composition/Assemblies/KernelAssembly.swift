import Api
import Domain
import Foundation
import Injection
import Layers

/// Kernel's own parts, registered through the public catalog like an app's, and present in
/// every `KernelApp`:
///
/// - adapters `defaultHeaders` (`Accept`, the app's `User-Agent`), `apiKey(header: <name>)`
///   (the environment's `apiKey` in that header, beside its authentication);
/// - retriers `backoff` (its policy from `retry.*`);
/// - monitor `log` (the `-v` trace: each try with its metrics);
/// - authenticators `none`, `plainToken`, `oauth2`, `apiKey`, `basic` (see `authenticators`);
/// - layers `logging`, `dedupe`, `memory(<capacity>, <seconds>)`, `cache(<policy>[, <seconds>])`;
/// - the store (`cache(cacheOnly)`), which a `store` stack answers from;
/// - contexts `memory`, `persistent` (`context.json` in the data dir);
/// - transport `http` (URLSession, with the config's timeouts and secret headers).
struct KernelAssembly: Assembly {
  /// Kernel's parts.
  public init() {}

  /// Registers Kernel's settings and parts (above).
  public func assemble(into catalog: inout Catalog) {
    for setting in AppSetting.kernel { catalog.setting(setting) }
    catalog.adapter("defaultHeaders") { r in
      DefaultHeadersAdapter(userAgent: try r.resolve(KernelApp.self).userAgent)
    }
    catalog.adapter(
      "apiKey", parameters: { try $0.string("header", at: 0, default: "X-Api-Key") },
      build: { header, _ in ApiKeyAdapter(header: header) })
    Self.authenticators(into: &catalog)
    // The `-v` trace: each try's line with its metrics, in the debug log.
    catalog.monitor("log") { r in LogMonitor(try r.resolve(Runtime.self).log) }
    catalog.retrier("backoff") { r in
      let retry = try r.resolve(KernelConfig.self).retry
      var policy = BackoffRetrier.Policy()
      policy.maxRetries = retry.maxRetries
      policy.baseDelay = .milliseconds(retry.baseDelayMs)
      policy.retryAfterCap = .seconds(retry.retryAfterCapSeconds)
      return BackoffRetrier(
        policy: policy, random: try r.resolve(), now: try r.resolve(WallClock.self).now)
    }

    catalog.layer("logging") { r in
      LoggingLayer(log: try r.resolve(Runtime.self).log, clock: try r.resolve())
    }
    catalog.layer("dedupe") { _ in DedupeLayer() }
    catalog.layer(
      "memory", usage: "memory(<capacity>, <seconds>)",
      parameters: {
        (
          try $0.positiveInt("capacity", at: 0, default: 64),
          try $0.positiveInt("seconds", at: 1, default: 60)
        )
      },
      build: { memory, r in
        MemoryLayer(capacity: memory.0, maxAge: .seconds(memory.1), clock: try r.resolve())
      })
    catalog.layer(
      "cache", needs: .cache, usage: "cache(<policy>)", parameters: Self.policy,
      build: { policy, r in try Self.cache(policy, r) })
    catalog.store { r in try Self.cache(.cacheOnly, r) }
    // Writes kept for the environment in use, in the cache's partition; reads pass through.
    catalog.layer("outbox", needs: [.outbox, .cache]) { r in
      OutboxLayer(
        outbox: try r.resolve(Outbox.self),
        origin: try r.resolve((any ApiContext).self).environment.origin.description,
        partition: try r.cachePartition(), warn: try r.resolve(Runtime.self).warn)
    }

    catalog.context("memory") { r in InMemoryApiContext(environment: try r.resolve()) }
    catalog.context("persistent", persists: true) { r in
      let environments = try r.resolve(Environments.self)
      let runtime = try r.resolve(Runtime.self)
      let context = try PersistentApiContext(
        file: runtime.dataDirectory.appendingPathComponent("context.json"),
        defaultEnvironment: environments.configured, environments: environments.all,
        warn: runtime.warn)
      // --environment and --base-url win over the saved environment, for this run only;
      // --base-url alone replaces the base URL of the saved one.
      if runtime.environment != nil {
        context.override(with: environments.chosen)
      } else if let baseURL = runtime.baseURL {
        let saved = context.environment
        context.override(
          with: try ApiEnvironment(
            name: saved.name, baseURL: baseURL, tokenHeader: saved.tokenHeader,
            tokenScheme: saved.tokenScheme, allowsInsecureHTTP: saved.allowsInsecureHTTP,
            values: saved.values))
      }
      return context
    }

    catalog.transport("http") { r in
      let settings = try r.resolve(TransportSettings.self)
      #if canImport(Darwin)
        var configuration = URLSessionTransport.Configuration()
        configuration.requestTimeout = settings.requestTimeout
        configuration.resourceTimeout = settings.resourceTimeout
        return URLSessionTransport(configuration: configuration, clock: try r.resolve())
      #else
        var configuration = CurlTransport.Configuration()
        configuration.connectTimeout = settings.requestTimeout
        configuration.stallTimeout = settings.requestTimeout
        configuration.resourceTimeout = settings.resourceTimeout
        return CurlTransport(configuration: configuration, clock: try r.resolve())
      #endif
    }
  }

  /// The `cache` layer with `policy`, over the cache store in the data dir, partitioned by the
  /// environment's origin and base path and whom its requests speak for (`cachePartition`).
  static func cache(_ policy: CachePolicy, _ r: Resolver) throws -> any ServiceLayer {
    CachingLayer(
      store: try r.resolve(), policy: policy, partition: try r.cachePartition(),
      clock: try r.resolve(), background: try r.resolve(),
      warn: try r.resolve(Runtime.self).warn)
  }

  static let policyNames = [
    "cacheOnly", "networkOnly", "cacheFirst(<seconds>)", "networkFirst", "cacheThenNetwork",
    "staleWhileRevalidate(<seconds>)",
  ]

  /// `cache(<policy>[, <max age seconds>])`; networkFirst when none is named.
  static func policy(_ p: Parameters) throws -> CachePolicy {
    let name = p.value("policy", at: 0) ?? "networkFirst"
    let maxAge = Duration.seconds(try p.positiveInt("maxAge", at: 1, default: 300))
    let policies: [String: CachePolicy] = [
      "cacheOnly": .cacheOnly, "networkOnly": .networkOnly, "networkFirst": .networkFirst,
      "cacheThenNetwork": .cacheThenNetwork, "cacheFirst": .cacheFirst(maxAge: maxAge),
      "staleWhileRevalidate": .staleWhileRevalidate(maxAge: maxAge),
    ]
    guard let policy = policies[name] else {
      throw ConfigError.unknownName(file: p.file, key: p.key, name: name, valid: policyNames)
    }
    return policy
  }
}
