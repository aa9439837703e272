import Foundation

/// How many children run to their end at once through `BuiltCommand.run` and `shell`: twice the
/// cores and two more; further runs wait for a slot before they start, and a run's time limit
/// starts with it.
///
/// Every test of a suite runs at once, so without a bound a hundred end-to-end tests start a
/// hundred children together, each with a sliver of the cores, and one that needs a few seconds
/// of processor time (3,000 requests) ran past its 60 s limit under the soak's load with no hang
/// in it. Children started with `launch` or `start` take no slot: a test that needs many at once
/// (24 first runs on one data folder, two syncs, a watcher and a writer) gets them all. A test's
/// own time limit counts its waits too, so Kernel's end-to-end suites take five minutes: what
/// catches a hung child is each run's limit, which starts with the child.
final class RunSlots: Sendable {
  private struct State {
    var free: Int
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  private let state: PthreadGuarded<State>

  /// The slots every run in this process shares.
  static let shared = RunSlots(ProcessInfo.processInfo.activeProcessorCount * 2 + 2)

  init(_ count: Int) { state = PthreadGuarded(State(free: max(1, count))) }

  /// Runs `body` in a slot, waiting for one first.
  func holding<R>(_ body: () async throws -> R) async rethrows -> R {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state -> Bool in
        guard state.free > 0 else {
          state.waiting.append(continuation)
          return false
        }
        state.free -= 1
        return true
      }
      if now { continuation.resume() }
    }
    defer {
      let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
        guard !state.waiting.isEmpty else {
          state.free += 1
          return nil
        }
        return state.waiting.removeFirst()
      }
      next?.resume()
    }
    return try await body()
  }
}
