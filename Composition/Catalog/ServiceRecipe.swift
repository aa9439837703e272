import Api
import Injection
import Layers

/// How a service is built: its sources by name, and how layers wrap them. A profile's stack for
/// the service names layers, then one source: `[logging, cache(networkFirst), api]`. A source
/// makes a `Base`: what answers the calls under the layers, each value with its validators
/// (an api service's `Response`s); the layered form turns it into the `Service` the app asks
/// for.
///
/// ```swift
/// catalog.service("books", (any BookService).self, source: ApiBookService.self) { books in
///   books.api { client in ApiBookService(client: client) }
///   books.layered { base, layers in LayeredBookService(base: base, layers: layers) }
/// }
/// ```
public struct ServiceRecipe<Service: Sendable, Base: Sendable>: Sendable {
  /// The config key its stacks are written under (`books`).
  public let key: String
  var sources: [String: SourceRecipe] = [:]
  var wrap: (@Sendable (Source<Base>?, [any ServiceLayer]) -> Service)?
  /// A base that is itself the service (`Catalog.service(_:_:tag:_:)`): a stack with no layers
  /// may be its source alone.
  let asService: (@Sendable (Base) -> Service)?

  /// A source as registered: what it needs, and the source the layers call.
  struct SourceRecipe: Sendable {
    let needs: Needs
    let make: Catalog.Make<Source<Base>>
    /// The base itself, for a stack of no layers over a base that is the service.
    let base: Catalog.Make<Base>
  }

  init(key: String, asService: (@Sendable (Base) -> Service)?) {
    self.key = key
    self.asService = asService
  }

  /// A source a stack may end in; `needs: .api` when it sends requests. Its base makes no
  /// conditional requests (`Source.plain`).
  public mutating func source(
    _ name: String, needs: Needs = [], _ make: @escaping Catalog.Make<Base>
  ) {
    sources[name] = SourceRecipe(needs: needs, make: { r in .plain(try make(r)) }, base: make)
  }

  /// The `api` source: the base over the shared api client (environment, adapters,
  /// retriers, transport). Under a caching layer, each call gets the base over a client that
  /// offers the cached copy's validators to that call alone (`ApiClient.offering(_:)`).
  public mutating func api(_ make: @escaping @Sendable (ApiClient) -> Base) {
    sources["api"] = SourceRecipe(
      needs: .api, make: { r in .api(try r.resolve(ApiClient.self), make) },
      base: { r in make(try r.resolve(ApiClient.self)) })
  }

  /// How the stack's layers wrap a source (nil for `store`: the layers answer alone). It also
  /// gives the service the `store` source: its calls answered from the cache only.
  public mutating func layered(
    _ wrap: @escaping @Sendable (_ base: Source<Base>?, _ layers: [any ServiceLayer]) -> Service
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

  init<Service: Sendable, Base: Sendable>(
    _ recipe: ServiceRecipe<Service, Base>, tag: Tag? = nil
  ) {
    key = recipe.key
    isLayered = recipe.wrap != nil
    let storeSource = Catalog.storeSource
    let store = recipe.wrap == nil ? [] : [storeSource]
    // With no layered form, only a base that is the service can be a stack's source.
    let sources = recipe.wrap == nil && recipe.asService == nil ? [] : Array(recipe.sources.keys)
    sourceNames = (sources + store).sorted()
    sourceNeeds = { name in
      name == storeSource && recipe.wrap != nil ? .cache : recipe.sources[name]?.needs
    }
    register = { source, layers, storeLayer, container in
      let all = layers + (source == storeSource ? storeLayer.map { [$0] } ?? [] : [])
      let build: Catalog.Make<[any ServiceLayer]> = { r in try all.map { try $0.make(r) } }
      if let made = recipe.sources[source], source != storeSource || recipe.wrap == nil {
        if all.isEmpty, let asService = recipe.asService {
          try container.register(Service.self, scope: .session, tag: tag) { r in
            asService(try made.base(r))
          }
        } else if let wrap = recipe.wrap {
          try container.register(Service.self, scope: .session, tag: tag) { r in
            wrap(try made.make(r), try build(r))
          }
        }
      } else if let wrap = recipe.wrap {
        try container.register(Service.self, scope: .session, tag: tag) { r in
          wrap(nil, try build(r))
        }
      }
    }
  }
}
