import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Serialises the making of singletons in one container, so each is made exactly once.
///
/// Re-entrant for the thread that holds it: a singleton's factory may resolve another singleton
/// that is not made yet, through its resolver or through the container.
@usableFromInline
final class CreationLock: Sendable {
  private let mutex = Mutex<Void>(())
  /// The holding thread's id, or 0. Only the holder writes its own id, so a thread that reads
  /// its own id holds the lock.
  private let owner = Atomic<UInt>(0)

  @usableFromInline
  func withLock<R: Sendable>(_ body: () throws -> R) throws -> R {
    let me = Self.currentThread
    if owner.load(ordering: .relaxed) == me { return try body() }
    return try mutex.withLock { _ throws(any Error) -> R in
      owner.store(me, ordering: .relaxed)
      defer { owner.store(0, ordering: .relaxed) }
      return try body()
    }
  }

  private static var currentThread: UInt {
    #if canImport(Darwin)
      UInt(bitPattern: pthread_self())
    #else
      UInt(pthread_self())
    #endif
  }
}
