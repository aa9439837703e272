import Synchronization

/// Work a layer started behind an answer (a stale-while-revalidate refresh), kept so that a
/// caller can wait for it to land: a test before it looks at the store, a one-shot process
/// before it exits.
final class PendingWork: Sendable {
  private let state = Mutex((next: 0, tasks: [Int: Task<Void, Never>]()))

  /// Runs `work` in a task of its own, remembered until it ends.
  func start(_ work: @escaping @Sendable () async -> Void) {
    // Made under the lock, so the task's own removal (which takes the lock) comes after it.
    state.withLock { state in
      state.next += 1
      let id = state.next
      state.tasks[id] = Task {
        await work()
        _ = self.state.withLock { $0.tasks.removeValue(forKey: id) }
      }
    }
  }

  /// Returns once every piece of work started so far, and any it started, has ended.
  func settle() async {
    while let pending = state.withLock({ $0.tasks.first }) {
      await pending.value.value
      _ = state.withLock { $0.tasks.removeValue(forKey: pending.key) }
    }
  }
}
