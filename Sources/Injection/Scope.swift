/// How long a resolved instance lives, and who shares it.
public enum Scope: Hashable, Sendable, CustomStringConvertible {
  /// A new instance for every resolve.
  case unique
  /// One instance per top-level resolve: everything built for one `resolve` call shares it.
  /// The default, as in Dip: it lets a graph hold one object at two places. A registration
  /// that takes runtime arguments builds anew for each resolve, whatever the arguments.
  case shared
  /// Made on first resolve, then kept by the container that holds the registration (with
  /// runtime arguments, the first resolve's arguments make it), for the container's life.
  case singleton
  /// A singleton made by `bootstrap()`, so start-up pays for it and failures surface early.
  case eagerSingleton
  /// Kept while someone else holds it; made again once every holder has let go. Only a class
  /// (or an existential holding one) can be held weakly: a value type is refused.
  case weakSingleton
  /// A scope of the app's own: made on first resolve and kept, like a singleton, until
  /// `Container.reset(_:)` drops every instance of this scope; the next resolve makes anew.
  case named(String)

  /// What a signed-in session builds (a client holding its token, the services over it):
  /// dropped by `reset(.session)` at logout or when the environment changes.
  public static let session = Scope.named("session")

  /// Whether a registration in this scope keeps what it builds past the resolve that made it.
  var keepsInstances: Bool {
    switch self {
    case .unique, .shared: false
    case .singleton, .eagerSingleton, .weakSingleton, .named: true
    }
  }

  public var description: String {
    switch self {
    case .unique: "unique"
    case .shared: "shared"
    case .singleton: "singleton"
    case .eagerSingleton: "eagerSingleton"
    case .weakSingleton: "weakSingleton"
    case .named(let name): name
    }
  }
}

/// A scope `Container.reset(_:)` can drop: a named one (`.session`, `.named("cart")`) or the
/// weak singletons. Singletons (eager or not) are read without a lock for as long as their
/// container lives, so there is no `ResettableScope.singleton`: drop the container, or register
/// what must be renewed in a named scope.
public struct ResettableScope: Sendable, Hashable {
  let scope: Scope

  /// A scope of the app's own, as registered with `Scope.named(name)`.
  public static func named(_ name: String) -> Self { Self(scope: .named(name)) }
  /// What a signed-in session builds (`Scope.session`).
  public static let session = Self(scope: .session)
  /// Every weak singleton: the next resolve makes anew even while others still hold the old one.
  public static let weakSingleton = Self(scope: .weakSingleton)
}
