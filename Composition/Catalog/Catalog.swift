import Api
import Foundation
import Injection
import Layers

/// What an app's config may name, registered by name: services and their sources, adapters,
/// retriers, layers, api contexts, transports and the app's own settings. A registry of named
/// factories (Autofac's configuration modules, Swinject's assemblies), never a `switch`: Kernel
/// registers its own parts through the same calls an app uses (`KernelAssembly`; the
/// example's assembly in its own module). A later registration of a name replaces the earlier one,
/// so an app can
/// replace a part of Kernel's.
///
/// A part the config names with arguments (`memory(64, 60)`) is registered with two closures:
/// `parameters` reads the config entry's `Parameters` into a value when the config is composed
/// (a bad one is a config error before anything is built), and the other builds the part from
/// that value and the container when it is resolved:
///
/// ```swift
/// catalog.adapter(
///   "tenant", parameters: { try $0.string("id", at: 0) },
///   build: { id, _ in TenantAdapter(id: id) })
/// catalog.layer("logging") { r in LoggingLayer(log: try r.resolve(Runtime.self).log) }
/// ```
public struct Catalog: Sendable {
  /// Builds a part from the container: the clocks, `Runtime`, `KernelConfig`, the api client.
  public typealias Make<Part> = @Sendable (Resolver) throws -> Part
  /// Reads a config entry's parameters into what builds the part.
  public typealias ReadParameters<Read> = @Sendable (Parameters) throws -> Read
  /// Builds a part from what its entry's parameters were read into, and the container.
  public typealias Build<Read, Part> = @Sendable (Read, Resolver) throws -> Part
  /// Builds an environment's authenticator (its secrets are among `environment.values`); nil:
  /// requests go without a credential.
  public typealias MakeAuthenticator =
    @Sendable (Resolver, ApiEnvironment) throws -> (any Authenticator)?
  /// How a part is planned when the config names it: its parameters read, its build kept.
  typealias Factory<Part> = @Sendable (Parameters) throws -> Make<Part>

  /// The plan of a part without parameters.
  static func plan<Part>(_ make: @escaping Make<Part>) -> Factory<Part> { { _ in make } }

  /// The plan of a part whose parameters `read` reads, built by `build`.
  static func plan<Read: Sendable, Part>(
    _ read: @escaping ReadParameters<Read>, _ build: @escaping Build<Read, Part>
  ) -> Factory<Part> {
    { parameters in
      let value = try read(parameters)
      return { resolver in try build(value, resolver) }
    }
  }

  struct Component<Part>: Sendable {
    let needs: Needs
    let factory: Factory<Part>
    /// How messages show it: `memory(<capacity>, <seconds>)`.
    var usage: String? = nil
  }

  /// Everything registered, by name.
  struct Parts: Sendable {
    var adapters: [String: Component<any RequestAdapter>] = [:]
    var retriers: [String: Component<any RequestRetrier>] = [:]
    var monitors: [String: Make<any RequestMonitor>] = [:]
    var authenticators: [String: AuthenticatorPart] = [:]
    var layers: [String: Component<any ServiceLayer>] = [:]
    var contexts: [String: Context] = [:]
    var transports: [String: TransportPart] = [:]
    var services: [String: ServiceRecipe] = [:]
    var feeds: [(service: String, feed: ChangesFeed)] = []
    var models: [String: (version: Int, migrates: Bool)] = [:]
    /// Each registered entity type's count of its stored rows that should read and do not.
    var damaged: [String: @Sendable ([CacheEntry]) -> Int] = [:]
    var settings: [String: AppSetting] = [:]
    var store: Make<any ServiceLayer>?
  }

  /// Everything registered so far: a registration is applied when it is made.
  private(set) var parts = Parts()

  /// An empty catalog; `KernelApp` starts with Kernel's parts in it.
  public init() {}

  var adapters: [String: Component<any RequestAdapter>] { parts.adapters }
  var retriers: [String: Component<any RequestRetrier>] { parts.retriers }
  var monitors: [String: Make<any RequestMonitor>] { parts.monitors }
  var authenticators: [String: AuthenticatorPart] { parts.authenticators }
  var layers: [String: Component<any ServiceLayer>] { parts.layers }
  var contexts: [String: Context] { parts.contexts }
  var transports: [String: TransportPart] { parts.transports }
  var services: [String: ServiceRecipe] { parts.services }
  var settings: [String: AppSetting] { parts.settings }
  /// The services' keys, each a key of the config holding the service's stack.
  public var serviceKeys: [String] { parts.services.keys.sorted() }
  /// The settings table: Kernel's rows and the app's, by key.
  public var table: [AppSetting] {
    // The keys are sorted, not the rows: moving the rows while sorting was a third of the time
    // of a command's help text (the config flags) at start-up.
    parts.settings.keys.sorted().compactMap { parts.settings[$0] }
  }
  var store: Make<any ServiceLayer>? { parts.store }

  /// The source a stack names to answer from the cache alone.
  static let storeSource = "store"

  /// Adds one feature's registrations.
  public mutating func add(_ assembly: some Assembly) {
    assembly.assemble(into: &self)
  }

  /// A request adapter the `adapters:` list may name. Its `secretHeaders` are redacted in
  /// traces and dropped on a redirect to another origin.
  public mutating func adapter(_ name: String, _ make: @escaping Make<any RequestAdapter>) {
    parts.adapters[name] = Component(needs: .api, factory: Self.plan(make))
  }

  /// A request adapter with arguments (`tenant(id: acme)`), read by `parameters`.
  public mutating func adapter<Read: Sendable>(
    _ name: String, parameters: @escaping ReadParameters<Read>,
    build: @escaping Build<Read, any RequestAdapter>
  ) {
    parts.adapters[name] = Component(needs: .api, factory: Self.plan(parameters, build))
  }

  /// A request retrier the `retriers:` list may name.
  public mutating func retrier(_ name: String, _ make: @escaping Make<any RequestRetrier>) {
    parts.retriers[name] = Component(needs: .api, factory: Self.plan(make))
  }

  /// A request retrier with arguments (`rateLimit(3)`), read by `parameters`.
  public mutating func retrier<Read: Sendable>(
    _ name: String, parameters: @escaping ReadParameters<Read>,
    build: @escaping Build<Read, any RequestRetrier>
  ) {
    parts.retriers[name] = Component(needs: .api, factory: Self.plan(parameters, build))
  }

  /// A request monitor: every api client tells it of each try as it ends, with the
  /// transport's metrics (`RequestEvent`), in the order of the monitors' names. Kernel's `log`
  /// writes them to the `-v` log; registering another name adds one, registering `log` again
  /// replaces it.
  ///
  /// ```swift
  /// catalog.monitor("slow") { r in SlowRequests(log: try r.resolve(Runtime.self).warn) }
  /// ```
  public mutating func monitor(_ name: String, _ make: @escaping Make<any RequestMonitor>) {
    parts.monitors[name] = make
  }

  /// An authenticator an environment's `auth:` may name (`oauth2(grant: password)`), built for
  /// the environment in use. `usage` shows its parameters in messages.
  ///
  /// `sendsBaseURLCredentials`: it sends the user and password a base URL holds
  /// (`https://user:password@host/`); with any other authenticator such a base URL is a config
  /// error, not credentials silently left unsent.
  public mutating func authenticator(
    _ name: String, usage: String? = nil, sendsBaseURLCredentials: Bool = false,
    _ make: @escaping MakeAuthenticator
  ) {
    parts.authenticators[name] = AuthenticatorPart(
      factory: { _ in make }, usage: usage, sendsBaseURLCredentials: sendsBaseURLCredentials)
  }

  /// An authenticator with arguments, read by `parameters` when the config is composed.
  ///
  /// ```swift
  /// catalog.authenticator(
  ///   "session", usage: "session(route: <path>)",
  ///   parameters: { $0.value("route", at: 0) ?? "session" },
  ///   build: { route, _, environment in SessionAuthenticator(route: route) })
  /// ```
  public mutating func authenticator<Read: Sendable>(
    _ name: String, usage: String? = nil, sendsBaseURLCredentials: Bool = false,
    parameters read: @escaping ReadParameters<Read>,
    build: @escaping @Sendable (Read, Resolver, ApiEnvironment) throws -> (any Authenticator)?
  ) {
    parts.authenticators[name] = AuthenticatorPart(
      factory: { parameters in
        let value = try read(parameters)
        return { resolver, environment in try build(value, resolver, environment) }
      }, usage: usage, sendsBaseURLCredentials: sendsBaseURLCredentials)
  }

  /// An authenticator as registered.
  struct AuthenticatorPart: Sendable {
    let factory: @Sendable (Parameters) throws -> MakeAuthenticator
    let usage: String?
    let sendsBaseURLCredentials: Bool
  }

  /// A layer any service's stack may name; `needs: .cache` when it uses the cache store.
  public mutating func layer(
    _ name: String, needs: Needs = [], _ make: @escaping Make<any ServiceLayer>
  ) {
    parts.layers[name] = Component(needs: needs, factory: Self.plan(make))
  }

  /// A layer with arguments, read by `parameters`; `usage` shows them in messages
  /// (`memory(<capacity>, <seconds>)`).
  public mutating func layer<Read: Sendable>(
    _ name: String, needs: Needs = [], usage: String? = nil,
    parameters: @escaping ReadParameters<Read>, build: @escaping Build<Read, any ServiceLayer>
  ) {
    parts.layers[name] = Component(
      needs: needs, factory: Self.plan(parameters, build), usage: usage)
  }

  /// An api context `context:` may name. It resolves `Environments` for the configured ones.
  /// `persists`: it keeps the environment and credentials in the data dir, so commands create
  /// the dir before using it and say the credential is saved there.
  public mutating func context(
    _ name: String, persists: Bool = false, _ make: @escaping Make<any ApiContext>
  ) {
    parts.contexts[name] = Context(persists: persists, make: make)
  }

  /// A transport an environment's `transport:` may name (`http` unless it says otherwise). It
  /// resolves `TransportSettings` for the timeouts and the secret headers. `answersInProcess`:
  /// it sends nothing over the network (`env list` says so, and `--base-url` replaces it with
  /// `http`).
  public mutating func transport(
    _ name: String, answersInProcess: Bool = false, _ make: @escaping Make<any Transport>
  ) {
    parts.transports[name] = TransportPart(answersInProcess: answersInProcess, make: make)
  }

  /// An api context as registered.
  struct Context: Sendable {
    let persists: Bool
    let make: Make<any ApiContext>
  }

  /// A transport as registered.
  struct TransportPart: Sendable {
    let answersInProcess: Bool
    let make: Make<any Transport>
  }

  /// What answers the calls of a stack that ends in the `store` source: a layer that answers
  /// from the cache alone, under the stack's other layers, with nothing under it.
  ///
  /// Three names, three ideas: `offline` is a *profile* (a config's choice of a stack per
  /// service); `store` is a *source* (a stack's last entry: its calls answered by the cache,
  /// with no api under it); `cacheOnly` is a *policy* of the `cache` layer (answer from the
  /// store, never ask below). Kernel's store is the `cache` layer with the `cacheOnly` policy,
  /// and Kernel's `offline` profile stacks every service on the store.
  public mutating func store(_ make: @escaping Make<any ServiceLayer>) {
    parts.store = make
  }

  /// A service whose calls carry their requests (`ServiceCall(_:entities:local:stored:)`): the
  /// config stacks it per profile under `key` (`books: [logging, "cache(networkFirst)", api]`,
  /// `offline: {books: [store]}`), and `Composed.stack(_:)` gives the profile's `ServiceStack`,
  /// which answers and watches any of them. Nothing is registered per call.
  ///
  /// ```swift
  /// catalog.service("books")
  /// ```
  public mutating func service(_ key: String) {
    parts.services[key] = ServiceRecipe(key: key)
  }

  /// A changes feed of the service `service` (`ChangesFeed`): `kernel sync`, and
  /// `Composed.sync()`, bring the store up to date with it through the profile's stack for
  /// that service. The service is registered too when it is not yet (`service(_:)`), and the
  /// feed's entity type (`entity(_:type:)`).
  ///
  /// ```swift
  /// catalog.feed(.books, of: "books")
  /// ```
  public mutating func feed(_ feed: ChangesFeed, of service: String) {
    if parts.services[service] == nil { self.service(service) }
    parts.feeds.append((service, feed))
    parts.models[feed.type] = (feed.modelVersion, feed.migrates)
    parts.damaged[feed.type] = feed.damaged
  }

  /// Names an entity type the app's calls store (`Movie`), so `cache stats` and `doctor` can
  /// count its stored rows that no longer read as its model (`StoredModel`): stored by an older
  /// version of the app, with no migration from it; and `doctor` those that are damaged.
  ///
  /// ```swift
  /// catalog.entity(Book.self)
  /// ```
  public mutating func entity<E: Identifiable & Codable & Sendable>(
    _ entity: E.Type, type: String? = nil
  ) {
    let shape = EntityShape<[E]>.list(E.self, type: type)
    parts.models[shape.type] = (shape.modelVersion, shape.migrates)
    parts.damaged[shape.type] = shape.damaged
  }

  /// The entity types registered (`entity(_:type:)`): each one's version and whether it
  /// declares migrations.
  public var models: [String: (version: Int, migrates: Bool)] { parts.models }

  /// The changes feeds registered, with their services, in the order they were.
  public var feeds: [(service: String, feed: ChangesFeed)] { parts.feeds }

  /// A key of the app's own in the config, read with Kernel's precedence and shown by
  /// `config show`: at the top level (and in any profile), or in every environment.
  public mutating func setting(_ setting: AppSetting) {
    parts.settings[setting.id] = setting
  }

  /// The layers as messages list them, with their arguments.
  var layerUsages: [String] {
    let layers = self.layers
    return layers.keys.sorted().map { layers[$0]?.usage ?? $0 }
  }
}

/// One feature's registrations together, as Swinject's `Assembly`: an app lists its assemblies.
public protocol Assembly: Sendable {
  /// Registers the feature's parts and settings in `catalog`.
  func assemble(into catalog: inout Catalog)
}

/// What a part needs built beside it: the api side (environments, context, transport, client)
/// or the cache store. A profile builds only what its stacks need.
public struct Needs: OptionSet, Sendable, Hashable {
  /// The set's bits.
  public let rawValue: Int
  /// The needs of bits `rawValue`.
  public init(rawValue: Int) { self.rawValue = rawValue }
  /// The api side: environments, context, transport, client.
  public static let api = Needs(rawValue: 1)
  /// The cache store.
  public static let cache = Needs(rawValue: 2)
  /// The outbox beside the cache (a stack names the `outbox` layer).
  public static let outbox = Needs(rawValue: 4)
}

/// A service the config stacks per profile (`Catalog.service(_:)`): the profile's
/// `ServiceStack` under the service's key, its layers over the api client (the `api` source) or
/// over the store alone (`store`).
struct ServiceRecipe: Sendable {
  /// Its key in the config (`books`), and its tag in the container.
  let key: String

  /// The sources a stack of it may end with, and what each needs built beside it: the api
  /// client, or the store.
  static let sources: [String: Needs] = ["api": .api, Catalog.storeSource: .cache]

  /// The sources a stack of it may end with.
  var sourceNames: [String] { Self.sources.keys.sorted() }

  /// What the source `name` needs built beside it; nil for a name that is not one of its sources.
  func sourceNeeds(_ name: String) -> Needs? { Self.sources[name] }

  /// Registers the stack the profile names: `layers` over the api client, or, over the store,
  /// `layers` and the store's layer (`storeLayer`) with nothing below.
  func register(
    _ source: String, _ layers: [PlannedLayer], _ storeLayer: PlannedLayer?, _ container: Container
  ) throws {
    let all = layers + (source == Catalog.storeSource ? storeLayer.map { [$0] } ?? [] : [])
    let overApi = source != Catalog.storeSource
    try container.register(ServiceStack.self, scope: .session, tag: Tag(key)) { r in
      ServiceStack(
        client: overApi ? try r.resolve(ApiClient.self) : nil,
        layers: try all.map { try $0.make(r) })
    }
  }
}

/// A layer a stack names, and what it needs built beside it.
struct PlannedLayer: Sendable {
  let needs: Needs
  let make: Catalog.Make<any ServiceLayer>
}
