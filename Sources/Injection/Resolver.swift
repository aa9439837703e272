/// What a factory resolves its dependencies through: the resolve in progress, so `shared`
/// instances are shared and cycles are caught. Resolve through it, not the container.
///
/// It holds what is being built (for cycles and error paths), the instances the resolve
/// shares (`shared` scope, and singletons not yet published), the property hooks waiting for
/// the graph to be built, and which edges of the graph to record. Property hooks run once the
/// outermost build has finished, as in Dip, so a hook can resolve an object whose initializer
/// was still running when the hook's owner was made. Singletons made on the way are published
/// only then, with the creation lock held until that moment.
///
/// Confined to the thread running the resolve (it is not `Sendable`) and never accessed
/// re-entrantly, hence unchecked exclusivity. A class, so a factory is handed the resolve
/// itself, with no reference counted per service built (it was a struct around it:
/// `container.provider` 4.45x manual before, 4.16x after, medians of five interleaved runs).
public final class Resolver {
  /// The container the resolve started from, not retained: whoever starts a resolve holds the
  /// container until it ends (`Container.resolving`), and a resolve that ends while a factory
  /// still holds its `Resolver` hands the container to `owner`. Retaining it cost two reference
  /// counts per resolve, on the runtime's slow path once a `Lazy` or `Provider` holds the
  /// container weakly (`container.provider`: 5.7x manual before, 5.1x after, medians of five
  /// interleaved runs here). Under AddressSanitizer in CI:
  /// `LifetimeTests.aResolverKeptPastItsResolveKeepsItsContainer`.
  @usableFromInline let unretained: Unmanaged<Container>  // safe: outlives the resolve (above)
  /// The container, held once the resolve has ended while its `Resolver` was kept elsewhere,
  /// so a kept resolver stays sound.
  @usableFromInline @exclusivity(unchecked) var owner: Container?  // safe: one thread
  /// The innermost service being built; each frame lives on the stack of its `build` call and
  /// points at the frame of the service that needed it, so entering a build allocates nothing.
  @usableFromInline @exclusivity(unchecked) var top: UnsafePointer<Frame>?  // safe: one thread
  /// What only shared instances, singletons and hooks need, made on first use: a resolve of
  /// unique services allocates nothing but this object.
  @usableFromInline @exclusivity(unchecked) var pending: Pending?  // safe: one thread

  @usableFromInline
  struct Frame {
    @usableFromInline let key: Key
    /// Whether edges out of this service are still being recorded (its first builds).
    @usableFromInline let recording: Bool
    @usableFromInline let parent: UnsafePointer<Frame>?

    @inlinable
    init(key: Key, recording: Bool, parent: UnsafePointer<Frame>?) {
      self.key = key
      self.recording = recording
      self.parent = parent
    }
  }

  /// Instances kept for this resolve, hooks waiting for the graph, singletons to publish.
  @usableFromInline
  final class Pending {
    @usableFromInline @exclusivity(unchecked) var kept: [Key: AnyObject] = [:]  // safe: one thread
    /// Property hooks to run when the graph is built, in the order their instances were made.
    @usableFromInline
    @exclusivity(unchecked) var hooks: [() throws -> Void] = []  // safe: one thread
    /// Singletons to publish once the hooks have run.
    @usableFromInline
    @exclusivity(unchecked) var publications: [() -> Void] = []  // safe: one thread
    @usableFromInline @exclusivity(unchecked) var holdsCreationLock = false  // safe: one thread
    @usableFromInline @exclusivity(unchecked) var finishing = false  // safe: one thread

    @usableFromInline init() {}
  }

  @inlinable
  init(container: Container) { unretained = .passUnretained(container) }

  /// The container the resolve started from.
  public var container: Container { unretained.takeUnretainedValue() }

  /// Runs `body` with the container, not retained. Safe: the container outlives the resolve
  /// (see `unretained`), and `body` does not keep it.
  @inlinable
  func withContainer<R>(_ body: (Container) throws -> R) rethrows -> R {
    try unretained._withUnsafeGuaranteedRef(body)
  }

  @inlinable
  var state: Pending {
    if let pending { return pending }
    let made = Pending()
    pending = made
    return made
  }

  @inlinable
  func isBuilding(_ key: Key) -> Bool {
    var frame = top
    while let current = frame {
      if current.pointee.key == key { return true }
      frame = current.pointee.parent
    }
    return false
  }

  /// Runs `body` with `key` as the service being built; the outermost build then runs the
  /// waiting hooks and publishes the singletons, or on failure drops them.
  @inlinable
  func building<R>(_ key: Key, recording: Bool, _ body: () throws -> R) throws -> R {
    let frame = Frame(key: key, recording: recording, parent: top)
    let result: R
    do {
      result = try withUnsafePointer(to: frame) { pointer in
        top = pointer
        defer { top = pointer.pointee.parent }
        return try body()
      }
    } catch {
      if top == nil, let pending, !pending.finishing { abandon() }
      throw error
    }
    if top == nil, let pending, !pending.finishing,
      pending.holdsCreationLock || !pending.hooks.isEmpty
    {
      try finish()
    }
    return result
  }

  /// Takes the container's creation lock for the rest of this resolve, once.
  @inlinable
  func lockForCreation() {
    let state = state
    guard !state.holdsCreationLock else { return }
    withContainer { $0.creationLock.lock() }
    state.holdsCreationLock = true
  }

  /// Lets go of the creation lock when nothing is being built or waiting.
  @inlinable
  func unlockIfIdle() {
    guard let pending, pending.holdsCreationLock, top == nil, !pending.finishing,
      pending.hooks.isEmpty, pending.publications.isEmpty
    else { return }
    pending.holdsCreationLock = false
    withContainer { $0.creationLock.unlock() }
  }

  /// Runs the waiting hooks (and any their resolves add), publishes the singletons, unlocks.
  @usableFromInline
  func finish() throws {
    let state = state
    state.finishing = true
    defer { state.finishing = false }
    do {
      var next = 0
      while next < state.hooks.count {
        try state.hooks[next]()
        next += 1
      }
    } catch {
      abandon()
      throw error
    }
    for publish in state.publications { publish() }
    state.hooks = []
    state.publications = []
    if state.holdsCreationLock {
      state.holdsCreationLock = false
      withContainer { $0.creationLock.unlock() }
    }
  }

  /// Drops what a failed resolve made: nothing is published, the lock is released.
  @usableFromInline
  func abandon() {
    guard let pending else { return }
    pending.hooks = []
    pending.publications = []
    pending.kept = [:]
    if pending.holdsCreationLock {
      pending.holdsCreationLock = false
      withContainer { $0.creationLock.unlock() }
    }
  }

  /// Notes that the service being built depends on `key`, while its edges are recorded.
  /// `deferred`: through a `Provider`, which resolves `key` anew at each call and keeps none.
  @inlinable
  func noteDependency(on key: Key, deferred: Bool = false) {
    guard let frame = top, frame.pointee.recording else { return }
    withContainer { $0.observe(Edge(from: frame.pointee.key, to: key, deferred: deferred)) }
  }

  /// The services being built, outermost first.
  @usableFromInline
  var path: [String] {
    var names: [String] = []
    var frame = top
    while let current = frame {
      names.append(current.pointee.key.description)
      frame = current.pointee.parent
    }
    return names.reversed()
  }

  @inlinable
  func kept<T>(_ key: Key, as type: T.Type) -> T? {
    guard let pending, let box = pending.kept[key] else { return nil }
    // `kept[key]` is only ever written with a `Box<T>` for the `T` that `key` names.
    return unsafeDowncast(box, to: Box<T>.self).value
  }

  @inlinable
  func keep<T>(_ value: T, for key: Key) { state.kept[key] = Box(value) }
}

/// A reference holding one value, so instances of any type share one dictionary.
@usableFromInline
final class Box<T> {
  @usableFromInline let value: T
  @inlinable
  init(_ value: T) { self.value = value }
}

/// One observed dependency: building `from` resolved `to`, or (`deferred`) took a `Provider`
/// of it.
@usableFromInline
struct Edge: Hashable, Sendable {
  let from: Key
  let to: Key
  let deferred: Bool

  @usableFromInline
  init(from: Key, to: Key, deferred: Bool = false) {
    self.from = from
    self.to = to
    self.deferred = deferred
  }
}

extension Box: Sendable where T: Sendable {}

extension Resolver {
  /// Resolves the `T` registered under `tag`, taking no runtime arguments.
  @inlinable
  public func resolve<T: Sendable>(_ type: T.Type = T.self, tag: Tag? = nil) throws -> T {
    let key = Key(T.self, tag: tag)
    noteDependency(on: key)
    return try withContainer { container in
      try withUnsafePointer(to: ()) {
        try container.resolve(key, in: self, arguments: Arguments($0))
      }
    }
  }

  /// Every `T` registered without runtime arguments, in registration order (see
  /// `Container.resolveAll`), sharing this resolve's `shared` instances.
  public func resolveAll<T: Sendable>(_ type: T.Type = T.self) throws -> [T] {
    try container.resolveAll(type, in: self)
  }

  /// `T` under `tag` when it is registered under it, else untagged: auto-wiring's rule.
  @inlinable
  func resolve<T: Sendable>(_ type: T.Type, preferring tag: Tag?) throws -> T {
    guard let tag, withContainer({ $0.hasRegistration(T.self, tag: tag) }) else {
      return try resolve(type)
    }
    return try resolve(type, tag: tag)
  }

  /// Resolves the `T` registered under `tag` for these runtime arguments' types.
  @inlinable
  public func resolve<T: Sendable, each A>(
    _ type: T.Type = T.self, tag: Tag? = nil, arguments: repeat each A
  ) throws -> T {
    noteDependency(on: Key(T.self, arguments: (repeat each A).self, tag: tag))
    return try withContainer { container in
      try container.resolve(type, tag: tag, in: self, arguments: repeat each arguments)
    }
  }
}

/// A resolver belongs to the thread running its resolve.
@available(*, unavailable)
extension Resolver: Sendable {}
