/// How long a resolved instance lives, and who shares it.
public enum Scope: String, Sendable, CaseIterable, CustomStringConvertible {
  /// A new instance for every resolve.
  case unique
  /// One instance per top-level resolve: everything built for one `resolve` call shares it.
  /// The default, as in Dip: it lets a graph hold one object at two places. A registration
  /// that takes runtime arguments builds anew for each resolve, whatever the arguments.
  case shared
  /// Made on first resolve, then kept by the container that holds the registration (with
  /// runtime arguments, the first resolve's arguments make it).
  case singleton
  /// A singleton made by `bootstrap()`, so start-up pays for it and failures surface early.
  case eagerSingleton
  /// Kept while someone else holds it; made again once every holder has let go.
  case weakSingleton

  public var description: String { rawValue }

  var isSingleton: Bool { self == .singleton || self == .eagerSingleton }
}
