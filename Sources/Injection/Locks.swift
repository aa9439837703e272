import Foundation

/// A value behind a lock.
///
/// Built on `NSLock` (a pthread mutex) rather than `Synchronization.Mutex`: on Linux the latter
/// waits in the kernel through a priority-inheriting futex that ThreadSanitizer cannot see, so
/// every contended section reads as a data race there. None of these locks is on the path of a
/// resolve in a bootstrapped container.
@usableFromInline
final class Locked<Value>: @unchecked Sendable {
  /// Guards `value`: it is only read or written inside `withLock`.
  private let lock = NSLock()
  private var value: Value

  @usableFromInline
  init(_ value: Value) { self.value = value }

  @usableFromInline
  func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}

/// Serialises the making of singletons in one container, so each is made exactly once.
///
/// A resolve that makes a singleton takes it and holds it until its whole graph is built and
/// its property hooks have run, then publishes what it made and lets go. It is recursive, so a
/// factory that resolves through the container itself (not its resolver) on the same thread
/// does not deadlock.
@usableFromInline
final class CreationLock: Sendable {
  private let recursiveLock = NSRecursiveLock()

  @usableFromInline
  func lock() { recursiveLock.lock() }

  @usableFromInline
  func unlock() { recursiveLock.unlock() }
}
