extension Container {
  @TaskLocal static var taskCurrent: Container?

  /// The container current for this task: set by `makeCurrent` (a composition sets it around
  /// the code it runs; a test, a child with its doubles), inherited by child tasks.
  public static var current: Container? { taskCurrent }

  /// Runs `body` with this container current for it, so `Injected` resolves from it.
  public func makeCurrent<R>(_ body: () throws -> R) rethrows -> R {
    try Container.$taskCurrent.withValue(self, operation: body)
  }

  /// Runs `body` with this container current for it and every task it starts.
  public func makeCurrent<R>(
    isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R
  ) async rethrows -> R {
    try await Container.$taskCurrent.withValue(self, operation: body)
  }
}

/// A dependency resolved from the container current for the task (`Container.current`) when
/// the value holding it is made, for code that takes no parameters (Dip's `Injected`):
///
/// ```swift
/// struct Greeter {
///   @Injected var clock: (any Clock<Duration>)?
///   @Injected(tag: "greeting") var greeting: String?
/// }
/// ```
///
/// A test makes a child with its doubles current (`child.makeCurrent { Greeter() }`) and the
/// doubles reach it. The property is optional: what is chosen at run time (a profile, a
/// config) decides what is registered, so a missing dependency is nil, never a crash, and
/// `$clock` says why — no container current, nothing registered (with the closest names), or
/// the factory's failure.
/// The services `Injected` is resolving on this task, outermost first.
private enum InjectedResolves {
  @TaskLocal static var keys: [Key] = []
}

/// A dependency of code that takes no parameters, resolved from the current container
/// (`Container.makeCurrent`) when the value holding it is made: nil when it cannot be, and the
/// projected value says why.
///
/// ```swift
/// struct Report {
///   @Injected var clock: (any Clock<Duration>)?
/// }
/// ```
@propertyWrapper
public struct Injected<T: Sendable & ExpressibleByNilLiteral>: Sendable {
  /// The resolved instance, or nil.
  public let wrappedValue: T
  /// Why `wrappedValue` is nil: nil when it was resolved.
  public let projectedValue: InjectionError?

  /// Resolves `type` (registered under `tag`) from the current container.
  public init(_ type: T.Type = T.self, tag: Tag? = nil) {
    let wrapped = (T.self as? any Deferred.Type)?.wrappedType ?? T.self
    let key = Key(wrapped, tag: tag)
    guard let container = Container.current else {
      (wrappedValue, projectedValue) = (nil, .noCurrentContainer(service: key.description))
      return
    }
    guard container.hasRegistration(T.self, tag: tag) else {
      (wrappedValue, projectedValue) = (nil, container.missing(key, path: []))
      return
    }
    // A cycle through `Injected` properties (a client's server whose client is injected)
    // would recurse until the stack overflows: the services being injected on this task are
    // tracked, and the one that closes a cycle is refused, naming it.
    let injecting = InjectedResolves.keys
    if injecting.contains(key) {
      let path = (injecting.drop { $0 != key } + [key]).map(\.description)
      (wrappedValue, projectedValue) = (nil, .circularDependency(path: path))
      return
    }
    do {
      (wrappedValue, projectedValue) = (
        try InjectedResolves.$keys.withValue(injecting + [key]) {
          try container.resolve(T.self, tag: tag)
        }, nil
      )
    } catch let error as InjectionError {
      (wrappedValue, projectedValue) = (nil, error)
    } catch {
      let failure = InjectionError.factoryFailed(
        service: key.description, underlying: error, path: [])
      (wrappedValue, projectedValue) = (nil, failure)
    }
  }
}
