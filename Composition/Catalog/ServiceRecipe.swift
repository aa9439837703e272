import Api
import Injection
import Layers

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
