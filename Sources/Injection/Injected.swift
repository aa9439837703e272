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
/// the value holding it is made, for code that takes no parameters:
///
/// ```swift
/// struct Greeter {
///   @Injected var clock: any Clock<Duration>
///   @Injected(tag: "greeting") var greeting: String
/// }
/// ```
///
/// A test makes a child with its doubles current (`child.makeCurrent { Greeter() }`) and the
/// doubles reach it. `$clock` is what resolving gave, to check or rethrow; reading the
/// property when resolving failed stops the program with that error's sentence (a programming
/// error: no container current, or a type registered nowhere).
@propertyWrapper
public struct Injected<T: Sendable>: Sendable {
  /// The instance, or why there is none: `try $clock.get()` throws it.
  public let projectedValue: Result<T, InjectionError>

  public init(_ type: T.Type = T.self, tag: Tag? = nil) {
    guard let container = Container.current else {
      projectedValue = .failure(.noCurrentContainer(service: Key(T.self, tag: tag).description))
      return
    }
    do {
      projectedValue = .success(try container.resolve(T.self, tag: tag))
    } catch let error as InjectionError {
      projectedValue = .failure(error)
    } catch {
      let service = Key(T.self, tag: tag).description
      projectedValue = .failure(.factoryFailed(service: service, underlying: error, path: []))
    }
  }

  public var wrappedValue: T {
    switch projectedValue {
    case .success(let instance): return instance
    case .failure(let error): fatalError("\(error)")
    }
  }
}
