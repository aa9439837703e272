/// A dependency container: register how to build each service, then resolve it anywhere.
///
/// Register everything, call `bootstrap()` (eager singletons are made, the container freezes),
/// then resolve from any thread or task. Tests take a `child()` and override what they fake.
///
/// ```swift
/// let container = Container()
/// try container.register(Clock.self, scope: .singleton) { _ in SystemClock() }
/// try container.autowire(Scheduler.self, Scheduler.init)  // Scheduler.init(clock:)
/// try container.bootstrap()
/// let scheduler: Scheduler = try container.resolve()
/// ```
public final class Container: Sendable {
  let parent: Container?
  @usableFromInline let registry = Registry()
  @usableFromInline let creationLock = CreationLock()
  /// Copies of ancestors' registrations this child has resolved, with their own instances.
  private let inherited = Locked<[Key: AnyDefinition]>([:])
  private let edges = Locked<Set<Edge>>([])

  /// An empty container.
  public init() { parent = nil }

  private init(parent: Container) { self.parent = parent }

  /// A container that sees this one's registrations and may override any of them. What it makes,
  /// it keeps: not one instance it builds reaches this container, and siblings never meet.
  public func child() -> Container { Container(parent: self) }

  // MARK: Registering

  /// Registers how to build `T`. The factory gets a resolver for its dependencies, then the
  /// runtime arguments, if it takes any: `{ (r, id: Int) in Loader(id: id, api: try r.resolve()) }`.
  @inlinable @discardableResult
  public func register<T: Sendable, each A>(
    _ type: T.Type = T.self, scope: Scope = .shared, tag: Tag? = nil,
    factory: @escaping @Sendable (Resolver, repeat each A) throws -> T
  ) throws -> Registration<T> {
    let key = Key(T.self, arguments: (repeat each A).self, tag: tag)
    let definition = Definition<T>(key: key, scope: scope) { resolver, arguments in
      let values = arguments.assumingMemoryBound(to: (repeat each A).self).pointee
      return try factory(resolver, repeat each values)
    }
    try add(definition)
    return Registration(container: self, key: key)
  }

  /// Registers `T` built by `initializer`, every parameter of which is resolved from the
  /// container: `try container.autowire(Service.init)` for `Service.init(api:store:)`.
  ///
  /// With a `tag`, each parameter is resolved under that tag when its type is registered under
  /// it, else untagged. An optional parameter (`store: Store?`) gets nil when its type is not
  /// registered; `Lazy<X>` and `Provider<X>` parameters defer resolving `X`.
  @inlinable @discardableResult
  public func autowire<T: Sendable, each D: Sendable>(
    _ type: T.Type = T.self, scope: Scope = .shared, tag: Tag? = nil,
    _ initializer: @escaping @Sendable (repeat each D) throws -> T
  ) throws -> Registration<T> {
    try register(type, scope: scope, tag: tag) { (resolver: Resolver) in
      try initializer(repeat try resolver.resolve((each D).self, preferring: tag))
    }
  }

  /// Wraps what the registration of `T` builds. Decorators stack in the order they are added:
  /// the first wraps the built instance, the next wraps that. Applies to every argument list `T`
  /// is registered with under `tag`; in a child, it decorates the child's copy only.
  @inlinable
  public func decorate<T: Sendable>(
    _ type: T.Type = T.self, tag: Tag? = nil,
    _ decorator: @escaping @Sendable (Resolver, T) throws -> T
  ) throws {
    try decorate(Key(T.self, tag: tag)) { (definition: Definition<T>) in
      definition.adding(decorator)
    }
  }

  @usableFromInline
  func add(_ definition: AnyDefinition) throws {
    try registry.update(service: definition.key.description) { $0[definition.key] = definition }
  }

  /// Replaces every registration of `service` (any arguments) with `change` of it; in a child,
  /// an inherited one is copied in first.
  @usableFromInline
  func decorate<T: Sendable>(_ service: Key, _ change: (Definition<T>) -> Definition<T>) throws {
    let inheritedMatches = parent.map { ancestor in
      ancestor.visibleDefinitions.filter { $0.key.sameService(as: service) }
    }
    let found = try registry.update(service: service.description) { entries in
      var matches = entries.values.filter { $0.key.sameService(as: service) }
      if matches.isEmpty { matches = inheritedMatches ?? [] }
      for match in matches {
        guard let definition = match as? Definition<T> else {
          throw InjectionError.decoratingForwardedType(
            service: match.key.description,
            forwardsTo: (match as? ForwardingEntry)?.targetKey.description ?? "another type")
        }
        entries[match.key] = change(definition)
      }
      return !matches.isEmpty
    }
    // Built outside the registry's lock: the diagnosis reads the registrations again.
    if !found { throw missing(service, path: []) }
  }

  // MARK: Resolving

  /// Builds or returns the `T` registered under `tag`, taking no runtime arguments.
  @inlinable
  public func resolve<T: Sendable>(_ type: T.Type = T.self, tag: Tag? = nil) throws -> T {
    try withUnsafePointer(to: ()) {
      try resolve(Key(T.self, tag: tag), in: nil, arguments: Arguments($0))
    }
  }

  /// Builds or returns the `T` registered under `tag` for these runtime arguments' types.
  @inlinable
  public func resolve<T: Sendable, each A>(
    _ type: T.Type = T.self, tag: Tag? = nil, arguments: repeat each A
  ) throws -> T {
    try resolve(type, tag: tag, in: nil, arguments: repeat each arguments)
  }

  /// Every `T` registered without runtime arguments (each tag, and untagged), in the order
  /// they were registered: an ancestor's first, a child's override in the place of what it
  /// overrides. Registrations forwarded to `T` by `implements` count too.
  public func resolveAll<T: Sendable>(_ type: T.Type = T.self) throws -> [T] {
    try resolveAll(type, in: nil)
  }

  /// Drops every instance that registrations in `scope` keep in this container (a named
  /// scope's, or the weak singletons'; a child keeps its own: reset it too), so the next resolve
  /// makes anew; other scopes are untouched. Singletons live as long as their container, so
  /// `reset(.singleton)` does not compile (see `ResettableScope`). Waits
  /// for a resolve that is making instances to finish, so none of its graph survives half-reset.
  /// Instances already handed out stay with their holders, so a singleton built from a
  /// `session` instance keeps the old one: give what depends on the session the same scope.
  public func reset(_ resettable: ResettableScope) {
    let scope = resettable.scope
    creationLock.lock()
    defer { creationLock.unlock() }
    let copies = inherited.withLock { Array($0.values) }
    for definition in registry.all + copies where definition.scope == scope {
      definition.dropScopedInstance()
    }
  }

  // MARK: Checking and starting

  /// Resolves every registration this container sees (with sample arguments where it takes
  /// some) and throws one `validationFailed` listing every failure, not just the first.
  public func validate() throws {
    // Validated in any order; only failures are put in order of the services they name, so a
    // valid graph never pays for the type names a sort by name would spell out.
    var failures: [(service: String, error: InjectionError)] = []
    for definition in visibleDefinitions {
      do {
        try definition.validate(in: self)
      } catch let error as InjectionError {
        failures.append((definition.key.description, error))
      } catch {
        let service = definition.key.description
        failures.append((service, .factoryFailed(service: service, underlying: error, path: [])))
      }
    }
    failures += captiveDependencies().map { ($0.service, $0.error) }
    if !failures.isEmpty {
      throw InjectionError.validationFailed(
        failures.sorted { $0.service < $1.service }.map(\.error))
    }
  }

  /// Every registration that keeps its instance (a singleton, a weak singleton, a named scope)
  /// and was built from a named-scope instance of another scope, directly or through `unique`
  /// and `shared` ones: a reset of that scope would leave it holding the old one. Read from the
  /// observed edges, so after every registration was resolved; a `Provider` is no such edge.
  func captiveDependencies() -> [(service: String, error: InjectionError)] {
    let definitions = visibleDefinitions
    var scopes: [Key: Scope] = [:]
    for definition in definitions { scopes[definition.key] = definition.scope }
    var outgoing: [Key: [Key]] = [:]
    for edge in observedEdges where !edge.deferred {
      outgoing[edge.from, default: []].append(edge.to)
    }
    var found: [(service: String, error: InjectionError)] = []
    for definition in definitions where definition.scope.keepsInstances {
      var pending = outgoing[definition.key] ?? []
      var seen = Set<Key>()
      while let next = pending.popLast() {
        guard seen.insert(next).inserted, let scope = scopes[next] else { continue }
        if case .named = scope, scope != definition.scope {
          let service = definition.key.description
          found.append(
            (
              service,
              .captiveDependency(
                service: service, scope: "\(definition.scope)", dependency: next.description,
                dependencyScope: "\(scope)")
            ))
        } else if !scope.keepsInstances {
          pending += outgoing[next] ?? []
        }
      }
    }
    return found
  }

  /// Freezes the container (registering afterwards throws `containerFrozen`) and makes its
  /// eager singletons. After it, resolving reads the registrations without taking a lock.
  public func bootstrap() throws {
    let definitions = registry.freeze()
    for definition in definitions where definition.scope == .eagerSingleton && !definition.isForward
    {
      try definition.validate(in: self)
    }
  }

  // MARK: Internals shared by Container and Resolver

  @inlinable
  func resolve<T: Sendable, each A>(
    _ type: T.Type, tag: Tag?, in resolution: Resolver?, arguments: repeat each A
  ) throws -> T {
    let values = (repeat each arguments)
    let key = Key(T.self, arguments: (repeat each A).self, tag: tag)
    return try withUnsafePointer(to: values) {
      try resolve(key, in: resolution, arguments: Arguments($0))
    }
  }

  /// The one resolve path. `arguments` points at a tuple of the types `key.arguments` names.
  /// Inlined into callers so it is specialised for `T`: in a bootstrapped container, a made
  /// singleton costs one table lookup and touches no reference count.
  @inlinable
  func resolve<T: Sendable>(_ key: Key, in resolution: Resolver?, arguments: Arguments)
    throws -> T
  {
    if let entry = registry.frozenLookup(key) {
      return try entry._withUnsafeGuaranteedRef {
        try resolve(entry: $0, in: resolution, arguments: arguments)
      }
    }
    guard let entry = registry.openLookup(key) ?? inheritedDefinition(for: key) else {
      return try resolveUnregistered(key, in: resolution)
    }
    return try resolve(entry: entry, in: resolution, arguments: arguments)
  }

  /// `Lazy`, `Provider` or an optional of any registered type (they need no registration of
  /// their own); else the error for a missing registration.
  @inlinable
  func resolveUnregistered<T: Sendable>(_ key: Key, in resolution: Resolver?) throws -> T {
    if ObjectIdentifier(key.arguments) == ObjectIdentifier(Void.self) {
      // Made in place, as the `T` it is: no cast from `Any` on the way back. Safe: the slot is
      // this call's temporary allocation of one `T`, and nothing keeps it past the call.
      let made = try withUnsafeTemporaryAllocation(of: T.self, capacity: 1) { buffer -> T? in
        guard let slot = buffer.baseAddress,
          try makeDeferred(
            T.self, tag: key.tag, in: resolution, into: UnsafeMutableRawPointer(slot))
        else { return nil }
        return slot.move()
      }
      if let made { return made }
    }
    throw missing(key, path: resolution?.path ?? [])
  }

  /// Initializes `slot` with a `Lazy`, `Provider` or optional of `type` and returns true, or
  /// returns false (leaving `slot` as it was) when `type` is none of them. Safe: `slot` is the
  /// caller's uninitialized memory for one `type`, for this call only.
  @usableFromInline
  func makeDeferred(
    _ type: any Any.Type, tag: Tag?, in resolution: Resolver?, into slot: UnsafeMutableRawPointer
  ) throws -> Bool {
    guard let deferred = type as? any Deferred.Type else { return false }
    try deferred.make(from: self, tag: tag, in: resolution, into: slot)
    return true
  }

  func resolveAll<T: Sendable>(_ type: T.Type, in resolution: Resolver?) throws -> [T] {
    var chain: [Container] = []
    var next: Container? = self
    while let container = next {
      chain.append(container)
      next = container.parent
    }
    var keys: [Key] = []
    var seen = Set<Key>()
    for container in chain.reversed() {
      for key in container.registry.keys(serving: T.self) where seen.insert(key).inserted {
        keys.append(key)
      }
    }
    return try resolving(in: resolution) { resolution in
      try keys.map { key in
        resolution.noteDependency(on: key)
        return try withUnsafePointer(to: ()) {
          try resolve(key, in: resolution, arguments: Arguments($0))
        }
      }
    }
  }

  /// Whether `type` has a registration under `tag` (not counting `Lazy`, `Provider` or
  /// optionals of it, which always resolve): what auto-wiring checks before using a tag.
  @usableFromInline
  func hasRegistration(_ type: any Any.Type, tag: Tag?) -> Bool {
    if original(for: Key(type, tag: tag)) != nil { return true }
    return (type as? any Deferred.Type)?.wrappedHasRegistration(in: self, tag: tag) ?? false
  }

  /// Whether resolving `type` under `tag` would find what to build (a registration, or a
  /// deferred form of one); its factory may still fail.
  func canResolve(_ type: any Any.Type, tag: Tag?) -> Bool {
    if original(for: Key(type, tag: tag)) != nil { return true }
    return (type as? any Deferred.Type)?.canResolve(in: self, tag: tag) ?? false
  }

  @inlinable
  func resolve<T: Sendable>(
    entry: AnyDefinition, in resolution: Resolver?, arguments: Arguments
  )
    throws -> T
  {
    // An entry found under a key naming `T` is a `Definition<T>` or a `Forward<T>`.
    if entry.isForward {
      let forward = unsafeDowncast(entry, to: Forward<T>.self)
      return try resolving(in: resolution) { try forward.resolve(in: $0, arguments: arguments) }
    }
    let definition = unsafeDowncast(entry, to: Definition<T>.self)
    if let made = definition.readyInstance { return made }
    return try resolving(in: resolution) { try definition.resolve(in: $0, arguments: arguments) }
  }

  /// Runs `body` within `resolution`, else within a resolve of its own that this call starts
  /// and ends. A resolve that ends while a factory still holds its `Resolver` hands it this
  /// container to hold (see `Resolver.unretained`).
  @inlinable
  func resolving<R>(in resolution: Resolver?, _ body: (Resolver) throws -> R) rethrows -> R {
    if let resolution { return try body(resolution) }
    var started = Resolver(container: self)
    defer { if !isKnownUniquelyReferenced(&started) { started.owner = self } }
    return try body(started)
  }

  /// The registration this container uses for `key`: its own, else its copy of an ancestor's.
  func definition(for key: Key) -> AnyDefinition? {
    registry.lookup(key) ?? inheritedDefinition(for: key)
  }

  /// A child's copy of the ancestor's registration for `key`, made on first use.
  @usableFromInline
  func inheritedDefinition(for key: Key) -> AnyDefinition? {
    guard let parent else { return nil }
    return inherited.withLock { copies in
      if let copy = copies[key] { return copy }
      guard let original = parent.original(for: key) else { return nil }
      let copy = original.cloned()
      copies[key] = copy
      return copy
    }
  }

  /// The registration for `key` in this container or the nearest ancestor that has one.
  func original(for key: Key) -> AnyDefinition? {
    registry.lookup(key) ?? parent?.original(for: key)
  }

  /// Every registration this container sees: its own, then ancestors' it does not override.
  var visibleDefinitions: [AnyDefinition] {
    var seen = Set<Key>()
    var result: [AnyDefinition] = []
    var container: Container? = self
    while let current = container {
      for definition in current.registry.all where seen.insert(definition.key).inserted {
        result.append(definition)
      }
      container = current.parent
    }
    return result
  }

  /// Records `edge`; one to an unregistered `Lazy`, `Provider` or optional is left out (what
  /// it wraps is recorded when it is made).
  @usableFromInline
  func observe(_ edge: Edge) {
    if original(for: edge.to) == nil, edge.to.type is any Deferred.Type { return }
    _ = edges.withLock { $0.insert(edge) }
  }

  var observedEdges: Set<Edge> {
    var all = edges.withLock { $0 }
    if let parent { all.formUnion(parent.observedEdges) }
    return all
  }
}
