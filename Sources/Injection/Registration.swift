/// A registration just made, to add what a factory alone cannot say.
public struct Registration<T: Sendable>: Sendable {
  let container: Container
  let key: Key

  @usableFromInline
  init(container: Container, key: Key) {
    self.container = container
    self.key = key
  }

  /// Serves `P` too, with the same instance per scope: a singleton registered as `Store` and
  /// forwarded to `Reading` and `Writing` is one object behind all three.
  @discardableResult
  public func implements<P: Sendable>(_ type: P.Type, tag: Tag? = nil) throws -> Self {
    let forwarded = Key(P.self, arguments: key.arguments, tag: tag ?? key.tag)
    try update { entries, definition in
      entries[forwarded] = Forward<P>(key: forwarded, target: key, scope: definition.scope)
      return definition
    }
    return self
  }

  /// Runs after the instance is built and kept, for property injection: a dependency resolved
  /// here may resolve this instance back (a `shared` or singleton cycle) without recursing.
  /// Hooks added by several calls all run, in the order they were added.
  @discardableResult
  public func resolvingProperties(_ hook: @escaping @Sendable (Resolver, T) throws -> Void) throws
    -> Self
  {
    try update { _, definition in definition.adding(hook: hook) }
    return self
  }

  /// The runtime arguments `validate()` resolves this registration with.
  @discardableResult
  public func validating<each A: Sendable>(with arguments: repeat each A) throws -> Self {
    guard ObjectIdentifier((repeat each A).self) == ObjectIdentifier(key.arguments) else {
      throw InjectionError.argumentMismatch(
        service: Key(T.self, tag: key.tag).description,
        given: Key(T.self, arguments: (repeat each A).self).signature,
        registered: [key.signature], path: [])
    }
    let values = (repeat each arguments)
    let sample = SampleArguments { body in
      try withUnsafePointer(to: values) { try body(Arguments($0)) }
    }
    try update { _, definition in definition.with(sample: sample) }
    return self
  }

  private func update(
    _ change: (inout Entries, Definition<T>) throws -> Definition<T>
  ) throws {
    let found = try container.registry.update(service: key.description) { entries in
      guard let definition = entries[key] as? Definition<T> else { return false }
      entries[key] = try change(&entries, definition)
      return true
    }
    // Built outside the registry's lock: the diagnosis reads the registrations again.
    if !found { throw container.missing(key, path: []) }
  }
}
