/// The state of one top-level resolve: what is being built (for cycles and error paths), the
/// instances it shares (`shared` scope, and singletons whose properties are still being set),
/// and which edges of the graph to record.
///
/// Confined to the thread running the resolve (factories see it only through `Resolver`, which
/// is not `Sendable`) and never accessed re-entrantly, hence unchecked exclusivity.
@usableFromInline
final class Resolution {
  @usableFromInline let container: Container
  /// The innermost service being built; each frame lives on the stack of its `build` call and
  /// points at the frame of the service that needed it, so entering a build allocates nothing.
  @usableFromInline @exclusivity(unchecked) var top: UnsafePointer<Frame>?
  @usableFromInline @exclusivity(unchecked) var kept: [Key: AnyObject] = [:]

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

  @inlinable
  init(container: Container) { self.container = container }

  @inlinable
  func isBuilding(_ key: Key) -> Bool {
    var frame = top
    while let current = frame {
      if current.pointee.key == key { return true }
      frame = current.pointee.parent
    }
    return false
  }

  /// Runs `body` with `key` as the service being built.
  @inlinable
  func building<R>(_ key: Key, recording: Bool, _ body: () throws -> R) rethrows -> R {
    let frame = Frame(key: key, recording: recording, parent: top)
    return try withUnsafePointer(to: frame) { pointer in
      top = pointer
      defer { top = pointer.pointee.parent }
      return try body()
    }
  }

  /// Notes that the service being built depends on `key`, while its edges are recorded.
  @inlinable
  func noteDependency(on key: Key) {
    guard let frame = top, frame.pointee.recording else { return }
    container.observe(Edge(from: frame.pointee.key, to: key))
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
    if kept.isEmpty { return nil }
    guard let box = kept[key] else { return nil }
    // `kept[key]` is only ever written with a `Box<T>` for the `T` that `key` names.
    return unsafeDowncast(box, to: Box<T>.self).value
  }

  @inlinable
  func keep<T>(_ value: T, for key: Key) { kept[key] = Box(value) }
}

/// A reference holding one value, so instances of any type share one dictionary.
@usableFromInline
final class Box<T> {
  @usableFromInline let value: T
  @inlinable
  init(_ value: T) { self.value = value }
}

/// One observed dependency: building `from` resolved `to`.
@usableFromInline
struct Edge: Hashable, Sendable {
  let from: Key
  let to: Key

  @usableFromInline
  init(from: Key, to: Key) {
    self.from = from
    self.to = to
  }
}
