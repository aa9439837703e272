import Synchronization

/// A registration seen without its type: what lookups, validation and introspection need.
///
/// Every stored property is a `let` of a `Sendable` type; subclasses document their own state.
@usableFromInline
class AnyDefinition: @unchecked Sendable {
  @usableFromInline let key: Key
  @usableFromInline let scope: Scope
  /// Whether this entry forwards to another registration (`Forward`) instead of building.
  @usableFromInline let isForward: Bool
  @usableFromInline let takesArguments: Bool
  /// Set once the first build of this service finished: its edges are then recorded.
  @usableFromInline let edgesObserved = Atomic<Bool>(false)

  init(key: Key, scope: Scope, isForward: Bool = false) {
    self.key = key
    self.scope = scope
    self.isForward = isForward
    takesArguments = ObjectIdentifier(key.arguments) != ObjectIdentifier(Void.self)
  }

  var decoratorCount: Int { 0 }
  var hookCount: Int { 0 }

  /// Drops the instance a named scope keeps (see `Container.reset(_:)`).
  func dropScopedInstance() {}

  /// Resolves this service through `container` with its sample arguments, for `validate()`.
  func validate(in container: Container) throws {}

  /// Builds (or returns the kept instance of) this service, without its static type.
  @usableFromInline
  func resolveErased(in resolution: Resolver, arguments: Arguments) throws -> any Sendable {
    throw InjectionError.definitionNotFound(
      service: key.description, path: resolution.path, closest: [])
  }

  /// Calls `body` with a pointer to the arguments `validate()` resolves with.
  func withSampleArguments(_ body: (Arguments) throws -> Void) throws {
    guard ObjectIdentifier(key.arguments) == ObjectIdentifier(Void.self) else {
      throw InjectionError.missingSampleArguments(
        service: key.description, signature: key.signature)
    }
    try withUnsafePointer(to: ()) { try body(Arguments($0)) }
  }

  /// The same recipe with empty instance storage, for a child container.
  func cloned() -> AnyDefinition { self }
}

/// Sample runtime arguments for `validate()`, kept without their types.
@usableFromInline
struct SampleArguments: Sendable {
  let withPointer: @Sendable ((Arguments) throws -> Void) throws -> Void

  @usableFromInline
  init(_ withPointer: @escaping @Sendable ((Arguments) throws -> Void) throws -> Void) {
    self.withPointer = withPointer
  }
}

/// How to build a `T` (its factory, its decorators composed into one closure, its property
/// hook) and the singleton it made.
@usableFromInline
final class Definition<T: Sendable>: AnyDefinition, @unchecked Sendable {
  @usableFromInline typealias Factory = @Sendable (Resolver, Arguments) throws -> T
  @usableFromInline typealias Decorator = @Sendable (Resolver, T) throws -> T
  @usableFromInline typealias Hook = @Sendable (Resolver, T) throws -> Void

  @usableFromInline let make: Factory
  /// Every decorator, in the order they were added, as one function.
  @usableFromInline let decorate: Decorator?
  /// Every property hook, in the order they were added, as one function.
  @usableFromInline let hook: Hook?
  let decorators: Int
  let hooks: Int
  let sample: SampleArguments?

  /// Singleton storage: `instance` is written once, while the container's creation lock is held,
  /// before `ready` is stored with release ordering; it is read only after `ready` loads true,
  /// and never dropped (a singleton lives as long as its container), so it is safe unlocked.
  @usableFromInline let ready = Atomic<Bool>(false)
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var instance: T?  // safe: above
  /// Weak-singleton storage, guarded by its lock.
  @usableFromInline let weakInstance = Locked<WeakReference>(WeakReference())
  /// A named scope's instance, guarded by its lock: `reset` may drop it at any time, so it is
  /// never read without the lock (unlike a singleton's).
  @usableFromInline let scopedInstance = Locked<T?>(nil)

  @usableFromInline
  init(
    key: Key, scope: Scope, make: @escaping Factory, decorate: Decorator? = nil, hook: Hook? = nil,
    decorators: Int = 0, hooks: Int = 0, sample: SampleArguments? = nil
  ) {
    self.make = make
    self.decorate = decorate
    self.hook = hook
    self.decorators = decorators
    self.hooks = hooks
    self.sample = sample
    super.init(key: key, scope: scope)
  }

  /// A copy with other parts and empty instance storage: changing a recipe drops what it made.
  func with(sample: SampleArguments?? = nil) -> Definition<T> {
    Definition(
      key: key, scope: scope, make: make, decorate: decorate, hook: hook,
      decorators: decorators, hooks: hooks, sample: sample ?? self.sample)
  }

  /// A copy that runs `added` after the property hooks it already has.
  func adding(hook added: @escaping Hook) -> Definition<T> {
    let composed: Hook
    if let previous = hook {
      composed = { resolver, instance in
        try previous(resolver, instance)
        try added(resolver, instance)
      }
    } else {
      composed = added
    }
    return Definition(
      key: key, scope: scope, make: make, decorate: decorate, hook: composed,
      decorators: decorators, hooks: hooks + 1, sample: sample)
  }

  /// A copy that runs `decorator` after the decorators it already has.
  @usableFromInline
  func adding(_ decorator: @escaping Decorator) -> Definition<T> {
    let composed: Decorator
    if let previous = decorate {
      composed = { resolver, instance in try decorator(resolver, try previous(resolver, instance)) }
    } else {
      composed = decorator
    }
    return Definition(
      key: key, scope: scope, make: make, decorate: composed, hook: hook,
      decorators: decorators + 1, hooks: hooks, sample: sample)
  }

  override var decoratorCount: Int { decorators }
  override var hookCount: Int { hooks }
  override func dropScopedInstance() {
    scopedInstance.withLock { $0 = nil }
    weakInstance.withLock { $0.object = nil }
  }
  override func cloned() -> AnyDefinition { with() }

  /// The singleton, if it was made: one acquiring load, no lock.
  @inlinable
  var readyInstance: T? {
    ready.load(ordering: .acquiring) ? instance : nil
  }

  @inlinable
  func resolve(in resolution: Resolver, arguments: Arguments) throws -> T {
    switch scope {
    case .unique:
      return try build(in: resolution, arguments: arguments, keep: false)
    case .shared:
      // Instances built from runtime arguments are not shared: other arguments would get them.
      if takesArguments { return try build(in: resolution, arguments: arguments, keep: false) }
      if let kept = resolution.kept(key, as: T.self) { return kept }
      return try build(in: resolution, arguments: arguments, keep: true)
    case .singleton, .eagerSingleton:
      if let kept = resolution.kept(key, as: T.self) { return kept }
      resolution.lockForCreation()
      if let made = readyInstance {
        resolution.unlockIfIdle()
        return made
      }
      return try build(in: resolution, arguments: arguments, keep: true) { made in
        self.instance = made
        self.ready.store(true, ordering: .releasing)
      }
    case .weakSingleton:
      if let kept = resolution.kept(key, as: T.self) { return kept }
      resolution.lockForCreation()
      // Read out, then cast: `withLock({ $0.object as? T })` called the cast with a null object
      // under -O after a reset cleared the reference (AddressSanitizer, release, Swift 6.3.1).
      let held = weakInstance.withLock { $0.object }
      if let held, let alive = held as? T {
        resolution.unlockIfIdle()
        return alive
      }
      let made = try build(in: resolution, arguments: arguments, keep: true) { made in
        self.weakInstance.withLock { $0.object = made as AnyObject }
      }
      // A protocol's registration is accepted as weak; what it built must be an object.
      guard type(of: made as Any) is AnyObject.Type else {
        throw InjectionError.weakSingletonOfValue(
          service: key.description, type: "\(type(of: made as Any))")
      }
      return made
    case .named:
      if let kept = resolution.kept(key, as: T.self) { return kept }
      if let made = scopedInstance.withLock({ $0 }) { return made }
      resolution.lockForCreation()
      if let made = scopedInstance.withLock({ $0 }) {
        resolution.unlockIfIdle()
        return made
      }
      return try build(in: resolution, arguments: arguments, keep: true) { made in
        self.scopedInstance.withLock { $0 = made }
      }
    }
  }

  /// Runs the factory and decorators and keeps the result for the resolve when asked. The
  /// property hook (on the undecorated instance) and `publish` wait for the graph to be built.
  @inlinable
  func build(
    in resolution: Resolver, arguments: Arguments, keep: Bool,
    publish: (@Sendable (T) -> Void)? = nil
  ) throws -> T {
    if resolution.isBuilding(key) { throw circular(resolution) }
    let recording = !edgesObserved.load(ordering: .relaxed)
    return try resolution.building(key, recording: recording) {
      do {
        let built = try make(resolution, arguments)
        // Nothing to decorate, keep or publish (a plain `unique` service): returned as built,
        // without a second reference to it (`container.unique_graph`: 4.40x manual before,
        // 3.73x after; `provider` 5.11x, 4.45x; medians of five interleaved runs here).
        guard decorate != nil || hook != nil || keep || publish != nil else {
          if recording { edgesObserved.store(true, ordering: .relaxed) }
          return built
        }
        let made = try decorate?(resolution, built) ?? built
        if keep { resolution.keep(made, for: key) }
        if let hook {
          resolution.state.hooks.append { try self.runHook(hook, on: built, in: resolution) }
        }
        if let publish { resolution.state.publications.append { publish(made) } }
        if recording { edgesObserved.store(true, ordering: .relaxed) }
        return made
      } catch {
        throw failed(error, resolution)
      }
    }
  }

  @usableFromInline
  func runHook(_ hook: Hook, on instance: T, in resolution: Resolver) throws {
    do {
      try hook(resolution, instance)
    } catch let error as InjectionError {
      throw error
    } catch {
      throw InjectionError.factoryFailed(
        service: "the properties of \(key.description)", underlying: error, path: [])
    }
  }

  @usableFromInline
  func circular(_ resolution: Resolver) -> InjectionError {
    .circularDependency(path: resolution.path + [key.description])
  }

  /// An injection error as it is; anything else as a failed factory, with the path to it.
  @usableFromInline
  func failed(_ error: any Error, _ resolution: Resolver) -> any Error {
    if error is InjectionError { return error }
    return InjectionError.factoryFailed(
      service: key.description, underlying: error, path: resolution.path.dropLast())
  }

  override func resolveErased(in resolution: Resolver, arguments: Arguments) throws
    -> any Sendable
  {
    try resolve(in: resolution, arguments: arguments)
  }

  override func withSampleArguments(_ body: (Arguments) throws -> Void) throws {
    if let sample { try sample.withPointer(body) } else { try super.withSampleArguments(body) }
  }

  override func validate(in container: Container) throws {
    try withSampleArguments { arguments in
      let _: T = try container.resolve(key, in: nil, arguments: arguments)
    }
  }
}

/// An entry that serves `P` with the instance of another registration (type forwarding), so the
/// two types share one instance per scope.
@usableFromInline
final class Forward<P: Sendable>: AnyDefinition, @unchecked Sendable {
  let target: Key

  init(key: Key, target: Key, scope: Scope) {
    self.target = target
    super.init(key: key, scope: scope, isForward: true)
  }

  override func cloned() -> AnyDefinition { Forward(key: key, target: target, scope: scope) }

  override func resolveErased(in resolution: Resolver, arguments: Arguments) throws
    -> any Sendable
  {
    try resolve(in: resolution, arguments: arguments)
  }

  @usableFromInline
  func resolve(in resolution: Resolver, arguments: Arguments) throws -> P {
    guard let definition = resolution.container.definition(for: target) else {
      throw resolution.container.missing(target, path: resolution.path)
    }
    let made = try definition.resolveErased(in: resolution, arguments: arguments)
    guard let served = made as? P else {
      throw InjectionError.forwardingMismatch(
        service: target.description, forwardedTo: key.typeName)
    }
    return served
  }

  override func validate(in container: Container) throws {
    guard let definition = container.definition(for: target) else {
      throw container.missing(target, path: [key.description])
    }
    try definition.withSampleArguments { arguments in
      let _: P = try container.resolve(key, in: nil, arguments: arguments)
    }
  }
}

/// Holds a weak singleton without keeping it alive.
@usableFromInline
struct WeakReference {
  @usableFromInline weak var object: AnyObject?
  @usableFromInline init() {}
}
