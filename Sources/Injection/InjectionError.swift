/// Everything the container can refuse, each with a description a person can act on.
///
/// Services are named as `Type`, `Type tagged "x"` or `Type with arguments (Int)`; a path lists
/// the services being built when the failure happened, outermost first.
public enum InjectionError: Error, Sendable, CustomStringConvertible {
  /// Nothing is registered under the requested type and tag.
  case definitionNotFound(service: String, path: [String], closest: [String])
  /// A service needs itself, through initializers, to be built.
  case circularDependency(path: [String])
  /// The type and tag are registered, but not for the runtime arguments given.
  case argumentMismatch(service: String, given: String, registered: [String], path: [String])
  /// A factory, decorator or property hook threw.
  case factoryFailed(service: String, underlying: any Error, path: [String])
  /// A registration arrived after `bootstrap()` froze the container.
  case containerFrozen(service: String)
  /// A forwarded type's resolved instance did not conform to it.
  case forwardingMismatch(service: String, forwardedTo: String)
  /// `validate()` cannot build a service that takes runtime arguments without samples.
  case missingSampleArguments(service: String, signature: String)
  /// `validate()` found these failures, each for one registration.
  case validationFailed([InjectionError])
  /// A `weakSingleton` of a value type, which nothing can hold weakly: refused when its
  /// factory first builds one (`validate()` builds every registration).
  case weakSingletonOfValue(service: String, type: String)
  /// A decorator for a type served through another registration's `implements`.
  case decoratingForwardedType(service: String, forwardsTo: String)
  /// `Injected` was used where no container is current for the task.
  case noCurrentContainer(service: String)
  /// A `Lazy` or `Provider` was read after the container that made it was released.
  case containerReleased(service: String)
  /// `Lazy<T>`, `Provider<T>` or `T?` was asked for with runtime arguments, which they do not
  /// take.
  case deferredWithArguments(service: String, wrapped: String, given: String)
  /// A registration that keeps its instance was built from one in a named scope, which a reset
  /// drops sooner: after the reset it would still hold the old one.
  case captiveDependency(
    service: String, scope: String, dependency: String, dependencyScope: String)

  public var description: String {
    switch self {
    case .definitionNotFound(let service, let path, let closest):
      var text = "No registration for \(service)\(Self.needed(by: path))."
      if !closest.isEmpty {
        text += " Registered and close to it: \(closest.joined(separator: ", "))."
      }
      return text
        + " Register it (container.register(...)) or override it in the test's child container."
    case .circularDependency(let path):
      return "Circular dependency through initializers: \(path.joined(separator: " → "))."
        + " Break the cycle by resolving one side in resolvingProperties instead of its factory."
    case .argumentMismatch(let service, let given, let registered, let path):
      return "\(service) was resolved with arguments \(given)\(Self.needed(by: path)),"
        + " but it is registered for \(registered.joined(separator: ", "))."
        + " Pass the arguments of one of those signatures."
    case .factoryFailed(let service, let underlying, let path):
      return "Building \(service) failed\(Self.needed(by: path)): \(underlying)"
    case .containerFrozen(let service):
      return "Cannot register \(service): the container was bootstrapped and is frozen."
        + " Register before bootstrap(), or in a child container."
    case .forwardingMismatch(let service, let forwardedTo):
      return
        "\(service) is forwarded to \(forwardedTo), but the instance built does not conform to it."
        + " Forward only to protocols the registered type adopts."
    case .missingSampleArguments(let service, let signature):
      return
        "\(service) takes runtime arguments \(signature) and cannot be validated without samples."
        + " Add .validating(with: ...) to its registration."
    case .weakSingletonOfValue(let service, let type):
      return "\(service) cannot be a weakSingleton: \(type) is a value type, which nothing holds"
        + " weakly, so it would be made anew on every resolve. Register it as singleton, a named"
        + " scope or unique, or make it a class."
    case .decoratingForwardedType(let service, let target):
      return "\(service) cannot be decorated: it is served by the registration of \(target)"
        + " (implements), and a decorator would make the two different objects. Decorate \(target),"
        + " or register \(service) with a factory of its own and decorate that."
    case .captiveDependency(let service, let scope, let dependency, let dependencyScope):
      return "\(service) (\(scope)) is built from \(dependency) (\(dependencyScope)), which"
        + " reset(.\(dependencyScope)) drops sooner: \(service) would keep the old one. Give"
        + " \(service) the scope \(dependencyScope), or take a Provider of \(dependency) and resolve"
        + " it when needed."
    case .noCurrentContainer(let service):
      return "No container is current for this task to resolve \(service)."
        + " Run the code inside container.makeCurrent { ... } (a child's, in a test),"
        + " or resolve it from a container directly."
    case .containerReleased(let service):
      return "\(service) was read after its container was released; keep the container alive as"
        + " long as what it made, or read it while the container lives."
    case .deferredWithArguments(let service, let wrapped, let given):
      return "\(service) takes no runtime arguments, so it cannot be resolved with \(given):"
        + " resolve \(wrapped) with its arguments directly, or register a factory closure and"
        + " take a Provider of that."
    case .validationFailed(let failures):
      let lines = failures.enumerated().map { "  \($0.offset + 1). \($0.element)" }
      return "The container has \(failures.count) invalid registration(s):\n"
        + lines.joined(separator: "\n")
    }
  }

  /// The one error every failure here comes from, when there is one: what a factory threw,
  /// under the services that needed it and the registrations that failed because of it. A
  /// command front reports that cause, once, instead of the list. Nil for the container's own
  /// refusals.
  public var rootCause: (any Error)? {
    switch self {
    case .factoryFailed(_, let underlying, _):
      guard let nested = underlying as? InjectionError else { return underlying }
      return nested.rootCause
    case .validationFailed(let failures):
      let causes = failures.compactMap(\.rootCause)
      guard causes.count == failures.count, let first = causes.first,
        causes.allSatisfy({ "\($0)" == "\(first)" })
      else { return nil }
      return first
    default:
      return nil
    }
  }

  private static func needed(by path: [String]) -> String {
    path.isEmpty ? "" : " (needed by \(path.joined(separator: " → ")))"
  }
}
