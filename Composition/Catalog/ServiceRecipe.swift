import Api
import Injection
import Layers

/// How a service is built: its sources by name, and how layers wrap it. A profile's stack for
/// the service names layers, then one source: `[logging, cache(networkFirst), api]`.
///
/// ```swift
/// catalog.service("books", (any BookService).self) { books in
///   books.api { client in ApiBookService(client: client) }
///   books.layered { base, layers in LayeredBookService(base: base, layers: layers) }
/// }
/// ```
public struct ServiceRecipe<Service: Sendable>: Sendable {
  public let key: String
  var sources: [String: SourceRecipe] = [:]
  var wrap: (@Sendable (Source<Service>?, [any ServiceLayer]) -> Service)?

  /// A source as registered: what it needs, the service it makes, and what layers call.
  struct SourceRecipe: Sendable {
    let needs: Needs
    let make: Catalog.Make<Service>
    /// Under layers: the service made per call (nil: the made service, as `.plain`).
    var layered: Catalog.Make<Source<Service>>? = nil
  }

  init(key: String) { self.key = key }

  /// A source a stack may end in; `needs: .api` when it sends requests.
  public mutating func source(
    _ name: String, needs: Needs = [], _ make: @escaping Catalog.Make<Service>
  ) {
    sources[name] = SourceRecipe(needs: needs, make: make)
  }

  /// The `api` source: the service over the shared api client (environment, adapters,
  /// retriers, transport). Under a caching layer, each call gets the service over a client
  /// that offers the cached copy's validators to that call alone (`ApiClient.offering(_:)`).
  public mutating func api(_ make: @escaping @Sendable (ApiClient) -> Service) {
    sources["api"] = SourceRecipe(
      needs: .api, make: { r in make(try r.resolve(ApiClient.self)) },
      layered: { r in .api(try r.resolve(ApiClient.self), make) })
  }

  /// How the stack's layers wrap a source (nil for `store`: the layers answer alone). It also
  /// gives the service the `store` source: its calls answered from the cache only.
  public mutating func layered(
    _ wrap: @escaping @Sendable (_ base: Source<Service>?, _ layers: [any ServiceLayer]) -> Service
  ) {
    self.wrap = wrap
  }
}

/// A planned layer: its parameters read, ready to be built on resolve.
struct PlannedLayer: Sendable {
  let needs: Needs
  let make: Catalog.Make<any ServiceLayer>
}

/// A service recipe without its type, as the catalog keeps it.
struct AnyServiceRecipe: Sendable {
  let key: String
  let sourceNames: [String]
  /// Whether layers can wrap it (it has a `layered` form).
  let isLayered: Bool
  let sourceNeeds: @Sendable (String) -> Needs?
  let register:
    @Sendable (_ source: String, _ layers: [PlannedLayer], _ storeLayer: PlannedLayer?, Container)
      throws -> Void
  /// For a write service (`Catalog.writes`): registers it over the `Writer` its stack names.
  var registerWrites: (@Sendable (WritePlan, Container) throws -> Void)? = nil

  init<Service: Sendable>(_ recipe: ServiceRecipe<Service>, tag: Tag? = nil) {
    key = recipe.key
    isLayered = recipe.wrap != nil
    let storeSource = Catalog.storeSource
    let store = recipe.wrap == nil ? [] : [storeSource]
    sourceNames = (recipe.sources.keys + store).sorted()
    sourceNeeds = { name in
      name == storeSource && recipe.wrap != nil ? .cache : recipe.sources[name]?.needs
    }
    register = { source, layers, storeLayer, container in
      let all = layers + (source == storeSource ? storeLayer.map { [$0] } ?? [] : [])
      let build: Catalog.Make<[any ServiceLayer]> = { r in try all.map { try $0.make(r) } }
      if let made = recipe.sources[source], source != storeSource || recipe.wrap == nil {
        try container.register(Service.self, scope: .session, tag: tag) { r in
          try made.make(r)
        }
        guard let wrap = recipe.wrap, !all.isEmpty else { return }
        try container.decorate(Service.self, tag: tag) { r, base in
          wrap(try made.layered?(r) ?? .plain(base), try build(r))
        }
      } else if let wrap = recipe.wrap {
        try container.register(Service.self, scope: .session, tag: tag) { r in
          wrap(nil, try build(r))
        }
      }
    }
  }
}

extension AnyServiceRecipe {
  /// A write service: its stack is `[outbox, api]`, `[outbox]` or `[api]` (see `Writer`).
  init<Service: Sendable>(
    writes key: String, tag: Tag?, sender: @escaping @Sendable (ApiClient) -> WriteSender,
    _ make: @escaping @Sendable (Writer) -> Service
  ) {
    self.key = key
    sourceNames = WritePlan.entries
    isLayered = false
    sourceNeeds = { WritePlan.needs[$0] }
    register = { _, _, _, _ in }
    registerWrites = { plan, container in
      try container.register(Service.self, scope: .session, tag: tag) { r in
        make(try plan.writer(r, sender: sender))
      }
    }
  }
}
