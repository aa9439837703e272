import Synchronization

/// A form of a registered type the container makes without a registration of its own:
/// `Lazy<T>`, `Provider<T>` and `T?`, for any `T` registered (under the tag asked for).
protocol Deferred {
  /// Made for a resolve of this type under `tag` from `container`, within `resolution` when
  /// a factory asked; throws what resolving the wrapped type would.
  static func make(from container: Container, tag: Tag?, in resolution: Resolver?) throws
    -> Self
  /// Whether the wrapped type is registered under `tag` (auto-wiring's tag check).
  static func wrappedHasRegistration(in container: Container, tag: Tag?) -> Bool
  /// Whether resolving this form under `tag` finds what to build.
  static func canResolve(in container: Container, tag: Tag?) -> Bool
  /// The type it wraps: `T` of `Lazy<T>`, `Provider<T>` and `T?`.
  static var wrappedType: any Any.Type { get }
}

extension Deferred {
  /// Makes one into `slot`, memory for a `Self` that is not yet initialized.
  static func make(
    from container: Container, tag: Tag?, in resolution: Resolver?,
    into slot: UnsafeMutableRawPointer  // safe: the caller's slot for one T, for this call only
  ) throws {
    slot.initializeMemory(as: Self.self, to: try make(from: container, tag: tag, in: resolution))
  }
}

/// A `T` made on first use, then kept: `let store: Lazy<Store> = try container.resolve()`,
/// then `try store.instance` where it is needed. Resolvable for any registered `T` without
/// registering it; a resolve of `Lazy<T>` fails at once when `T` is not registered. The instance
/// comes from a resolve of its own, with `T`'s scope (a `unique` `T` is made once per `Lazy`).
///
/// It holds its container weakly: a singleton that keeps a `Lazy` does not keep its container
/// (or a test's child) alive. Reading it for the first time after the container is gone
/// throws `InjectionError.containerReleased`. It takes no runtime arguments: `T` is resolved as
/// registered without them.
public final class Lazy<T: Sendable>: Sendable {
  @usableFromInline weak let container: Container?
  @usableFromInline let tag: Tag?
  /// The kept instance, once made: the first one stored wins.
  @usableFromInline let made = Mutex<T?>(nil)

  @usableFromInline
  init(container: Container, tag: Tag?) {
    self.container = container
    self.tag = tag
  }

  /// The instance: resolved on the first read, the same one afterwards. A failed resolve
  /// throws and is tried again on the next read. Two first reads at once may both resolve;
  /// both get the one kept first.
  @inlinable
  public var instance: T {
    get throws {
      if let kept = made.withLock({ $0 }) { return kept }
      guard let container else { throw Container.released(T.self, tag: tag, form: "Lazy") }
      let resolved = try container.resolve(T.self, tag: tag)
      return made.withLock { kept in
        if let first = kept { return first }
        kept = resolved
        return resolved
      }
    }
  }
}

/// Resolves a `T` on every call: `let next: Provider<Request> = try container.resolve()`,
/// then `try next.instance` (or `try next()`) for each one wanted. Resolvable for any
/// registered `T` without registering it; each call is a resolve of its own, with `T`'s scope.
/// Like `Lazy`, it holds its container weakly and takes no runtime arguments.
public struct Provider<T: Sendable>: Sendable {
  @usableFromInline let holder: WeakContainer
  @usableFromInline let tag: Tag?

  @usableFromInline
  init(container: Container, tag: Tag?) {
    self.holder = WeakContainer(container)
    self.tag = tag
  }

  /// A `T` resolved now.
  @inlinable
  public var instance: T {
    get throws {
      guard let container = holder.container else {
        throw Container.released(T.self, tag: tag, form: "Provider")
      }
      return try container.resolve(T.self, tag: tag)
    }
  }

  /// A `T` resolved now.
  @inlinable
  public func callAsFunction() throws -> T { try instance }
}

/// A container held weakly, by a `Provider` (a value, which cannot hold a weak reference of its
/// own) that may outlive it.
@usableFromInline
final class WeakContainer: Sendable {
  @usableFromInline weak let container: Container?

  init(_ container: Container) { self.container = container }
}

extension Container {
  /// The error for a `Lazy` or `Provider` read after its container was released.
  @usableFromInline
  static func released(_ type: any Any.Type, tag: Tag?, form: String) -> InjectionError {
    .containerReleased(service: "\(form)<\(Key(type, tag: tag).description)>")
  }
}

/// A deferred form that resolves one registered type when asked (`Lazy`, `Provider`): made at
/// once, provided that type is registered.
protocol ResolvesLater: Deferred {
  associatedtype Resolved
  /// Whether it keeps what it resolves (a `Lazy`) rather than resolving anew at each call.
  static var keepsWhatItResolves: Bool { get }
  init(container: Container, tag: Tag?)
}

extension ResolvesLater {
  static func make(from container: Container, tag: Tag?, in resolution: Resolver?) throws
    -> Self
  {
    resolution?.noteDependency(on: Key(Resolved.self, tag: tag), deferred: !keepsWhatItResolves)
    try container.requireResolvable(Resolved.self, tag: tag, in: resolution)
    return Self(container: container, tag: tag)
  }
  static func wrappedHasRegistration(in container: Container, tag: Tag?) -> Bool {
    container.hasRegistration(Resolved.self, tag: tag)
  }
  static func canResolve(in container: Container, tag: Tag?) -> Bool {
    container.canResolve(Resolved.self, tag: tag)
  }
  static var wrappedType: any Any.Type { Resolved.self }
}

extension Lazy: ResolvesLater {
  typealias Resolved = T
  static var keepsWhatItResolves: Bool { true }
}

extension Provider: ResolvesLater {
  typealias Resolved = T
  static var keepsWhatItResolves: Bool { false }
}

/// `T?`: the registered `T`, or nil when none is registered under the tag. A registered `T`
/// whose factory fails still throws: only absence is nil.
extension Optional: Deferred {
  static func make(from container: Container, tag: Tag?, in resolution: Resolver?) throws
    -> Self
  {
    let key = Key(Wrapped.self, tag: tag)
    return try container.resolving(in: resolution) { resolution -> Self in
      if let definition = container.definition(for: key) {
        resolution.noteDependency(on: key)
        let made = try withUnsafePointer(to: ()) {
          try definition.resolveErased(in: resolution, arguments: Arguments($0))
        }
        return made as? Wrapped
      }
      // An optional of a deferred form (`Lazy<T>?`): the form when `T` is registered.
      if let deferred = Wrapped.self as? any Deferred.Type,
        deferred.wrappedHasRegistration(in: container, tag: tag)
      {
        return try deferred.make(from: container, tag: tag, in: resolution) as? Wrapped
      }
      return nil
    }
  }
  static func wrappedHasRegistration(in container: Container, tag: Tag?) -> Bool {
    container.hasRegistration(Wrapped.self, tag: tag)
  }
  static func canResolve(in container: Container, tag: Tag?) -> Bool { true }
  static var wrappedType: any Any.Type { Wrapped.self }
}

extension Container {
  /// Throws what resolving `type` under `tag` would when nothing is registered for it.
  func requireResolvable(_ type: any Any.Type, tag: Tag?, in resolution: Resolver?) throws {
    guard !canResolve(type, tag: tag) else { return }
    throw missing(Key(type, tag: tag), path: resolution?.path ?? [])
  }
}
