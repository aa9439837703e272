import Foundation

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
