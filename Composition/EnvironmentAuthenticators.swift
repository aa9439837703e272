import Api
import Injection
import Layers

/// The authenticator each environment's config names (`environments.<name>.auth`), parsed once
/// per run and made when a client, or a cache's partition, needs it.
struct EnvironmentAuthenticators: Sendable {
  private let parts: [String: (name: String, sendsUser: Bool, make: Catalog.MakeAuthenticator)]

  init(config: KernelConfig, catalog: Catalog, app: KernelApp) throws {
    var parts: [String: (name: String, sendsUser: Bool, make: Catalog.MakeAuthenticator)] = [:]
    for (name, described) in config.environments {
      let key = "environments.\(name).auth"
      var parameters = try Parameters.parse(described.auth, file: config.file, key: key)
      parameters.variablePrefix = app.variablePrefix
      guard let part = catalog.authenticators[parameters.name] else {
        throw ConfigError.unknownName(
          file: config.file, key: key, name: parameters.name,
          valid: catalog.authenticators.keys.sorted())
      }
      parts[name] = (parameters.name, part.sendsBaseURLCredentials, try part.factory(parameters))
      try parameters.refuseLabelsNotAsked()
    }
    self.parts = parts
  }

  /// Whether `environment`'s authenticator sends the user and password of its base URL.
  func sendsUser(_ environment: ApiEnvironment) -> Bool {
    parts[environment.name]?.sendsUser ?? false
  }

  /// The authentication of `environment`, nil when it uses none.
  func authentication(for environment: ApiEnvironment, _ r: Resolver) throws
    -> AuthenticationInterceptor?
  {
    guard let part = parts[environment.name] else { return nil }
    return try part.make(r, environment).map {
      AuthenticationInterceptor(
        $0, name: part.name, clock: try r.resolve(), wallClock: try r.resolve())
    }
  }
}

extension Resolver {
  /// The cache partition of the environment in use: its origin and base path, and whom its
  /// requests speak for (a kept credential's identity, or HTTP Basic's configured user), so no
  /// environment or user is answered from another's stored answers. What Kernel's cache layer
  /// and writers use; an app's own layer over the store uses it too.
  public func cachePartition() throws -> String {
    let context = try resolve((any ApiContext).self)
    let environment = context.environment
    // An authenticator that cannot be made here (a setting the api side needs is missing) says
    // so where a request is made; the partition goes by the kept credential alone.
    let authentication = try? resolve(EnvironmentAuthenticators.self).authentication(
      for: environment, self)
    let identity = authentication?.identity(in: context) ?? context.credential?.identity
    return CachingLayer.partition(root: environment.storeRoot, identity: identity)
  }
}
