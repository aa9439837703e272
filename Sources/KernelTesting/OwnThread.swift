import Foundation

/// Runs blocking work (waiting for a process, `DispatchQueue.concurrentPerform`, a thread that
/// spins on purpose) on a thread of its own and awaits it, so it never holds one of the few
/// threads of Swift's cooperative pool that the other tests run on.
public func onThreadOfItsOwn<R: Sendable>(_ work: @escaping @Sendable () throws -> R)
  async throws -> R
{
  try await withCheckedThrowingContinuation { continuation in
    Thread.detachNewThread {
      continuation.resume(with: Result { try work() })
    }
  }
}

/// The same for work that cannot fail.
public func onThreadOfItsOwn<R: Sendable>(_ work: @escaping @Sendable () -> R) async -> R {
  await withCheckedContinuation { continuation in
    Thread.detachNewThread { continuation.resume(returning: work()) }
  }
}
