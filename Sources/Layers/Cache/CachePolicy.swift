import Synchronization

/// When a caching layer asks below it and when it answers from the store.
public enum CachePolicy: Sendable, Hashable, CustomStringConvertible {
  /// The store only (offline).
  case cacheOnly
  /// Below only, storing what it answers.
  case networkOnly
  /// The store while its copy is younger than `maxAge`, else below (the stale copy if below
  /// cannot be reached).
  case cacheFirst(maxAge: Duration)
  /// Below, falling back to the store when it cannot be reached, times out or answers 5xx
  /// after its retries; a 4xx is not hidden.
  case networkFirst
  /// The store's copy at once, as an early answer (`ServiceStack.answer(_:early:)`), then below's answer
  /// as the final one, falling back like `networkFirst`.
  case cacheThenNetwork
  /// The store's copy at once; when it is older than `maxAge`, below refreshes it behind, in
  /// the layer's `BackgroundWork`.
  case staleWhileRevalidate(maxAge: Duration)

  public var description: String {
    switch self {
    case .cacheOnly: "cacheOnly"
    case .networkOnly: "networkOnly"
    case .cacheFirst(let maxAge): "cacheFirst(maxAge: \(maxAge))"
    case .networkFirst: "networkFirst"
    case .cacheThenNetwork: "cacheThenNetwork"
    case .staleWhileRevalidate(let maxAge): "staleWhileRevalidate(maxAge: \(maxAge))"
    }
  }
}

/// Work a layer started behind an answer (a stale-while-revalidate refresh), kept so that a
/// caller can wait for it to land: a test before it looks at the store, a one-shot process
/// such as `kernel` before it exits. Shared through the container, one per process.
public final class BackgroundWork: Sendable {
  private let state = Mutex((next: 0, tasks: [Int: Task<Void, Never>]()))

  /// No work yet.
  public init() {}

  /// Runs `work` in a task of its own, remembered until it ends.
  public func start(_ work: @escaping @Sendable () async -> Void) {
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

  /// How much work is under way.
  public var pending: Int { state.withLock { $0.tasks.count } }

  /// Returns once every piece of work started so far, and any it started, has ended.
  public func settle() async {
    while let pending = state.withLock({ $0.tasks.first }) {
      await pending.value.value
      _ = state.withLock { $0.tasks.removeValue(forKey: pending.key) }
    }
  }

  /// Like `settle()`, but for at most `limit` on `clock`: what is still running then is
  /// cancelled. Says whether everything finished in time.
  public func settle(within limit: Duration, on clock: any Clock<Duration> = ContinuousClock())
    async -> Bool
  {
    await withTaskGroup(of: Bool.self) { group in
      group.addTask {
        await self.settle()
        return true
      }
      group.addTask {
        try? await clock.sleep(for: limit)
        return false
      }
      let finished = await group.next() ?? true
      // The waiting child returns only once the work ends: cancel the work, not just the wait.
      if !finished {
        for task in state.withLock({ $0.tasks.values }) { task.cancel() }
      }
      group.cancelAll()
      return finished
    }
  }
}
