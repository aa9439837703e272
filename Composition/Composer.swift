import Api
import Domain
import Foundation
import Injection
import Layers
import Store

/// The environments a context may switch between, and the one this run starts with: what an
/// api context resolves.
package struct Environments: Sendable {
  /// Every environment the config defines, by name order.
  public let all: [ApiEnvironment]
  /// The config's `environment`, without this run's `--environment` or `--base-url`.
  public let configured: ApiEnvironment
  /// The one this run asked for: `--environment`, else the configured one; `--base-url` applied.
  public let chosen: ApiEnvironment
  /// Whether `--environment` or `--base-url` chose for this run only.
  public let chosenForThisRun: Bool
}

/// What a transport and the client are built with: the config's timeouts and every header that
/// carries a credential (the environments' token headers and every adapter's secret headers),
/// which the client leaves off a request redirected to another origin.
struct TransportSettings: Sendable {
  /// `timeouts.requestSeconds`: how long a request may wait for its next bytes.
  public var requestTimeout: Duration
  /// `timeouts.resourceSeconds`: how long one exchange may take in all.
  public var resourceTimeout: Duration
  /// The headers that carry a credential, lower-cased.
  public var secretHeaders: Set<String>
}

/// Builds one profile's container from the app's catalog and the config. It names no concrete
/// service, adapter or layer: every part comes from the catalog by the name the config gives.
struct Composer {
  let app: KernelApp
  let config: KernelConfig
  let runtime: Runtime

  private var catalog: Catalog { app.catalog }

  /// The profile's registrations, whether they include the api side, and whether a stack
  /// keeps an outbox.
  func compose(profile: String?) throws -> (container: Container, hasApi: Bool, hasOutbox: Bool) {
    let name = profile ?? config.profile
    guard let chosen = config.profiles[name] else {
      throw ConfigError.unknownName(
        file: config.file, key: "profile", name: name, valid: config.profiles.keys.sorted())
    }
    var plans: [(recipe: ServiceRecipe, plan: StackPlan)] = []
    for key in catalog.services.keys.sorted() {
      guard let recipe = catalog.services[key], let written = chosen.stacks[key] else { continue }
      let plan = try StackPlan(
        written.entries, for: recipe, in: catalog, file: config.file, key: written.key)
      plans.append((recipe, plan))
    }
    let needs = plans.reduce(into: Needs()) { $0.formUnion($1.plan.needs) }
    let container = try base()
    // The cache is partitioned by the environment's origin, so a stack on the store alone
    // knows the environment too.
    if !needs.intersection([.api, .cache]).isEmpty { try registerEnvironments(in: container) }
    if needs.contains(.api) { try registerApi(in: container) }
    if needs.contains(.cache) {
      try registerCache(
        required: plans.contains { $0.plan.source == Catalog.storeSource }, in: container)
    }
    if needs.contains(.outbox) { try registerOutbox(in: container) }
    for (recipe, plan) in plans {
      try recipe.register(plan.source, plan.layers, plan.storeLayer, container)
    }
    return (container, needs.contains(.api), needs.contains(.outbox))
  }

  /// The outbox file in the data dir: `outbox.sqlite`, beside the cache.
  var outboxFile: URL { runtime.dataDirectory.appendingPathComponent("outbox.sqlite") }

  /// The outbox, opened when a write is first kept or read; a lease outlasts any call (twice
  /// `timeouts.callSeconds`).
  private func registerOutbox(in container: Container) throws {
    let file = outboxFile
    let lease = Duration.seconds(config.timeouts.callSeconds * 2 + 10)
    let opening = OutboxOpening(file: file)
    try container.register(Outbox.self, scope: .singleton) { r in
      Outbox(store: opening, clock: try r.resolve(), lease: lease)
    }
  }

  func composeApi() throws -> Container {
    let container = try base()
    try registerEnvironments(in: container)
    try registerApi(in: container)
    return container
  }

  /// The run, the config, the app, and time: the clock every delay and timeout is measured on,
  /// the calendar time cache ages are measured against, and the source of jitter; a test
  /// overrides any of them in a child container.
  private func base() throws -> Container {
    let container = Container()
    try container.register(Runtime.self, scope: .singleton) { [runtime] _ in runtime }
    try container.register(KernelConfig.self, scope: .singleton) { [config] _ in config }
    try container.register(KernelApp.self, scope: .singleton) { [app] _ in app }
    try container.register((any Clock<Duration>).self, scope: .singleton) { _ in ContinuousClock() }
    try container.register(RandomSource.self, scope: .singleton) { _ in .system }
    try container.register(WallClock.self, scope: .singleton) { _ in .system }
    return container
  }

  // MARK: The api side

  /// The configured environments, the one in use, and the api context holding it.
  private func registerEnvironments(in container: Container) throws {
    let environments = try Environments(
      all: Self.environments(config),
      configured: Self.environment(config.environment, in: config, baseURL: nil),
      chosen: Self.environment(
        runtime.environment ?? config.environment, in: config, baseURL: runtime.baseURL),
      chosenForThisRun: runtime.environment != nil || runtime.baseURL != nil)
    try container.register(Environments.self, scope: .singleton) { _ in environments }
    try container.register(ApiEnvironment.self, scope: .singleton) { _ in environments.chosen }

    guard let context = catalog.contexts[config.context] else {
      throw ConfigError.unknownName(
        file: config.file, key: "context", name: config.context,
        valid: catalog.contexts.keys.sorted())
    }
    try container.register((any ApiContext).self, scope: .singleton, factory: context.make)
    let authenticators = try EnvironmentAuthenticators(config: config, catalog: catalog, app: app)
    try container.register(EnvironmentAuthenticators.self, scope: .singleton) { _ in
      authenticators
    }
  }

  private func registerApi(in container: Container) throws {
    let adapters = try config.adapters.enumerated().map { index, written in
      try Self.prepare(
        written, from: catalog.adapters, file: config.file, key: "adapters[\(index)]")
    }
    let retriers = try config.retriers.enumerated().map { index, written in
      try Self.prepare(
        written, from: catalog.retriers, file: config.file, key: "retriers[\(index)]")
    }
    try container.register(CompositeAdapter.self, scope: .singleton) { r in
      CompositeAdapter(try adapters.map { try $0(r) })
    }

    var transports: [String: Catalog.Make<any Transport>] = [:]
    for name in config.environments.keys.sorted() {
      let chosen = config.environments[name]?.transport ?? "http"
      guard let make = catalog.transports[chosen] else {
        throw ConfigError.unknownName(
          file: config.file, key: "environments.\(name).transport", name: chosen,
          valid: catalog.transports.keys.sorted())
      }
      transports[name] = make.make
    }
    try container.register(TransportSettings.self, scope: .singleton) { [config] r in
      TransportSettings(
        requestTimeout: .seconds(config.timeouts.requestSeconds),
        resourceTimeout: .seconds(config.timeouts.resourceSeconds),
        secretHeaders: Set(try r.resolve(Environments.self).all.map { $0.tokenHeader.lowercased() })
          .union(try r.resolve(CompositeAdapter.self).secretHeaders))
    }
    let http = catalog.transports["http"]?.make
    // What a session builds (the transport chosen for its environment, the client holding its
    // token, the services over them) is dropped at logout and when the environment changes.
    try container.register((any Transport).self, scope: .session) { [runtime, transports] r in
      // The current environment's transport; a --base-url points at a real server.
      let current = try r.resolve((any ApiContext).self).environment.name
      let make = runtime.baseURL == nil ? transports[current] ?? http : http
      guard let make else {
        throw ConfigError.unknownName(
          file: "the catalog", key: "transports", name: "http",
          valid: Array(transports.keys).sorted())
      }
      return try make(r)
    }
    try container.register(ApiClient.self, scope: .session) { [config, runtime] r in
      let context = try r.resolve((any ApiContext).self)
      let environment = context.environment
      let authenticators = try r.resolve(EnvironmentAuthenticators.self)
      if !authenticators.sendsUser(environment),
        HTTPRequest.basicAuthorization(in: environment.baseURL) != nil
      {
        // A user and password go only with an authenticator that sends them: refused, not
        // silently left unsent.
        let override = runtime.baseURL == nil ? nil : config.written("baseURL")
        throw ConfigError.malformed(
          file: override?.file ?? config.file,
          key: override?.key ?? "environments.\(environment.name).baseURL",
          value: environment.displayURL,
          expected: "without a user and password, unless environments.\(environment.name).auth"
            + " sends them (basic)")
      }
      let authentication = try authenticators.authentication(for: environment, r)
      return ApiClient(
        context: context, transport: try r.resolve(),
        adapters: [try r.resolve(CompositeAdapter.self)], authentication: authentication,
        retriers: try retriers.map { try $0(r) }, clock: try r.resolve(),
        deadline: .seconds(config.timeouts.callSeconds),
        redirects: Redirects(secretHeaders: try r.resolve(TransportSettings.self).secretHeaders),
        monitors: try catalog.monitors.sorted { $0.key < $1.key }.map { try $0.value(r) })
    }
  }

  /// A part the config names at `key`, looked up in `components` with its parameters read.
  private static func prepare<Part>(
    _ written: String, from components: [String: Catalog.Component<Part>], file: String,
    key: String
  ) throws -> Catalog.Make<Part> {
    let parameters = try Parameters.parse(written, file: file, key: key)
    guard let component = components[parameters.name] else {
      throw ConfigError.unknownName(
        file: file, key: key, name: parameters.name, valid: components.keys.sorted())
    }
    let make = try component.factory(parameters)
    try parameters.refuseLabelsNotAsked()
    return make
  }

  /// The environments the config defines, as the api sees them, by name.
  static func environments(_ config: KernelConfig) throws -> [ApiEnvironment] {
    try config.environments.keys.sorted().map { try environment($0, in: config, baseURL: nil) }
  }

  /// The environment `name` of the config, with `baseURL` over its own when given.
  static func environment(_ name: String, in config: KernelConfig, baseURL: String?) throws
    -> ApiEnvironment
  {
    guard let described = config.environments[name] else {
      // Blamed on where the name was written: a flag, a variable, or the file.
      let setting = config.settings.first { $0.key == "environment" }
      let written = setting?.written
      let outside =
        setting.map {
          if case .flag = $0.source {
            true
          } else if case .variable = $0.source {
            true
          } else {
            false
          }
        } ?? false
      throw ConfigError.unknownName(
        file: outside ? written?.file ?? config.file : config.file,
        key: written?.key ?? "environment", name: name, valid: config.environments.keys.sorted())
    }
    do {
      return try ApiEnvironment(
        name: name, baseURL: baseURL ?? described.baseURL, tokenHeader: described.tokenHeader,
        tokenScheme: described.tokenScheme, allowsInsecureHTTP: described.insecure,
        values: described.values)
    } catch let error as ApiError {
      let override = baseURL == nil ? nil : config.written("baseURL")
      // Said in the config's words: the key names the environment, and its own key allows http.
      let reason =
        switch error {
        case .invalidEnvironment(_, let reason): reason + "."
        case .insecureEnvironment(_, let url):
          "it is plain http to a host that is not loopback (\(url)); use https, or set"
            + " environments.\(name).insecure: true if sending tokens in the clear is really"
            + " intended."
        default: error.description
        }
      throw ConfigError.invalidEnvironment(
        file: override?.file ?? config.file, key: override?.key ?? "environments.\(name).baseURL",
        reason: reason)
    }
  }

  // MARK: The cache

  /// The cache store in the data dir, shared by every caching layer, and the work they leave
  /// behind an answer. The file is opened at the first read or write, never by validation.
  /// When a stack answers from the store alone (`required`), a cache that cannot be opened
  /// fails the call with its own sentence (exit 78); otherwise it warns once and answers
  /// without it.
  private func registerCache(required: Bool, in container: Container) throws {
    try container.register(BackgroundWork.self, scope: .singleton) { _ in BackgroundWork() }
    let opening = CacheOpening(
      file: runtime.dataDirectory.appendingPathComponent("cache.sqlite"), required: required,
      budget: config.cacheBudget, warn: runtime.warn)
    try container.register((any CacheStore).self, scope: .singleton) { _ in opening }
    try container.register((any CacheMaintenance).self, scope: .singleton) { _ in opening }
  }
}

/// One service's stack as planned from the config: layers with their parameters read, then
/// one source.
struct StackPlan {
  let layers: [PlannedLayer]
  let source: String
  /// The catalog's `store` (`Catalog.store`), under the layers of a `store` stack.
  let storeLayer: PlannedLayer?
  let needs: Needs
  /// The longest stack a config may name: every layer is a decorator, and a call goes down and
  /// back up through all of them.
  static let maximumEntries = 32

  init(
    _ written: [String], for recipe: ServiceRecipe, in catalog: Catalog, file: String,
    key: String
  ) throws {
    let entries = StackEntry.rejoined(written)
    guard entries.count <= Self.maximumEntries else {
      throw ConfigError.malformed(
        file: file, key: key, value: "a stack of \(entries.count) entries",
        expected: "a stack of at most \(Self.maximumEntries) entries (layers and a source)")
    }
    let parsed = try entries.enumerated().map {
      try Parameters.parse($0.element, file: file, key: "\(key)[\($0.offset)]")
    }
    let sources = recipe.sourceNames.joined(separator: " or ")
    func unknown(_ entry: Parameters) -> ConfigError {
      .unknownName(
        file: file, key: entry.key, name: entry.name,
        valid: recipe.sourceNames + catalog.layerUsages)
    }
    guard let last = parsed.last, let sourceNeeds = recipe.sourceNeeds(last.name) else {
      if let last = parsed.last, catalog.layers[last.name] == nil { throw unknown(last) }
      throw ConfigError.stackWithoutSource(
        file: file, key: key, stack: entries, sources: sources)
    }
    var needs = sourceNeeds
    layers = try parsed.dropLast().map { entry in
      guard let layer = catalog.layers[entry.name] else {
        if recipe.sourceNeeds(entry.name) != nil {
          throw ConfigError.malformed(
            file: file, key: entry.key, value: entry.name,
            expected: "a layer: only the stack's last entry is its source (\(sources))")
        }
        throw unknown(entry)
      }
      needs.formUnion(layer.needs)
      let make = try layer.factory(entry)
      try entry.refuseLabelsNotAsked()
      return PlannedLayer(needs: layer.needs, make: make)
    }
    let source = last.name
    self.source = source
    if source == Catalog.storeSource {
      guard let store = catalog.store else {
        throw ConfigError.unknownName(
          file: file, key: key, name: source, valid: recipe.sourceNames.filter { $0 != source })
      }
      storeLayer = PlannedLayer(needs: .cache, make: store)
    } else {
      storeLayer = nil
    }
    self.needs = needs
  }
}
