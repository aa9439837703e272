/// What a factory resolves its dependencies through. It carries the resolve in progress, so
/// `shared` instances are shared and cycles are caught: resolve through it, not the container.
public struct Resolver {
  @usableFromInline let resolution: Resolution

  @usableFromInline
  init(resolution: Resolution) { self.resolution = resolution }

  /// The container the resolve started from.
  public var container: Container { resolution.container }

  /// Resolves the `T` registered under `tag`, taking no runtime arguments.
  @inlinable
  public func resolve<T: Sendable>(_ type: T.Type = T.self, tag: Tag? = nil) throws -> T {
    let key = Key(T.self, tag: tag)
    resolution.noteDependency(on: key)
    return try withUnsafePointer(to: ()) {
      try resolution.container.resolve(key, in: resolution, arguments: Arguments($0))
    }
  }

  /// Every `T` registered without runtime arguments, in registration order (see
  /// `Container.resolveAll`), sharing this resolve's `shared` instances.
  public func resolveAll<T: Sendable>(_ type: T.Type = T.self) throws -> [T] {
    try resolution.container.resolveAll(type, in: resolution)
  }

  /// `T` under `tag` when it is registered under it, else untagged: auto-wiring's rule.
  @inlinable
  func resolve<T: Sendable>(_ type: T.Type, preferring tag: Tag?) throws -> T {
    guard let tag, resolution.container.hasRegistration(T.self, tag: tag) else {
      return try resolve(type)
    }
    return try resolve(type, tag: tag)
  }

  /// Resolves the `T` registered under `tag` for these runtime arguments' types.
  @inlinable
  public func resolve<T: Sendable, each A>(
    _ type: T.Type = T.self, tag: Tag? = nil, arguments: repeat each A
  ) throws -> T {
    resolution.noteDependency(on: Key(T.self, arguments: (repeat each A).self, tag: tag))
    return try resolution.container.resolve(
      type, tag: tag, in: resolution, arguments: repeat each arguments)
  }
}

/// A resolver belongs to the thread running its resolve.
@available(*, unavailable)
extension Resolver: Sendable {}
