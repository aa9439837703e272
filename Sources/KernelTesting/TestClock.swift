import Synchronization

/// A clock that moves only when a test says so: a sleep on it is suspended until `advance(by:)`
/// passes its deadline, or its task is cancelled. Tests assert what was asked for (`sleeps`)
/// and in what order, never how long something took.
///
/// Inject it wherever Kernel takes `any Clock<Duration>`: `ApiClient` (retry delays),
/// the platform transport (the whole-request deadline), `AuthenticationInterceptor` (its refresh
/// window),
/// `SampleApiResponder.Options.clock` (latency, token lifetimes), `LoggingLayer`.
///
/// `TestClock(immediate: true)` is for tests where waits happen but only their length matters:
/// every sleep returns at once, its length recorded, and its time stands still, so a sleep's
/// length is exact however many tasks sleep at once (a sleep for a duration becomes a sleep
/// until `now` plus it; were time moved by one task's sleep, another's would be recorded short).
public final class TestClock: Clock, Sendable {
  /// A point on the test clock: the time advanced since it was made.
  public struct Instant: InstantProtocol, CustomStringConvertible {
    /// How far from the clock's start.
    public let offset: Duration

    /// The instant `offset` after the start.
    public init(offset: Duration) { self.offset = offset }

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    /// How long from this instant to `other`.
    public func duration(to other: Instant) -> Duration { other.offset - offset }

    public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }

    public var description: String { "\(offset)" }
  }

  private struct Sleeper {
    let deadline: Instant
    let continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [Int: Sleeper] = [:]
    var nextID = 0
    var asked: [Duration] = []
    /// Tests waiting for a number of suspended sleepers.
    var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = Mutex(State())
  /// Whether every sleep returns at once.
  private let immediate: Bool

  /// A clock at its start, moved only by `advance(by:)`; with `immediate`, one whose sleeps
  /// return at once.
  public init(immediate: Bool = false) { self.immediate = immediate }

  /// The time now.
  public var now: Instant { state.withLock { $0.now } }

  /// None: any duration is exact.
  public var minimumResolution: Duration { .zero }

  /// Every sleep asked of this clock, as the duration from the moment it was asked, in order.
  public var sleeps: [Duration] { state.withLock { $0.asked } }

  /// How many sleeps are suspended now.
  public var pendingSleeps: Int { state.withLock { $0.sleepers.count } }

  /// Waits until the clock is advanced to `deadline`; throws when the task is cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let id = state.withLock { state -> Int? in
      state.asked.append(state.now.duration(to: deadline))
      guard !immediate, state.now < deadline else { return nil }
      state.nextID += 1
      return state.nextID
    }
    guard let id else {
      await Task.yield()
      return
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let (watchers, cancelled) = state.withLock { state in
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return (Self.satisfiedWatchers(&state), Task.isCancelled)
        }
        for watcher in watchers { watcher.resume() }
        if cancelled { wake(id, throwing: CancellationError()) }
      }
    } onCancel: {
      wake(id, throwing: CancellationError())
    }
  }

  /// Moves time forward, waking every sleep whose deadline it reaches, earliest first.
  public func advance(by duration: Duration) {
    let due = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for id in due.keys { state.sleepers.removeValue(forKey: id) }
      return due.values.sorted { $0.deadline < $1.deadline }
    }
    for sleeper in due { sleeper.continuation.resume() }
  }

  /// Waits, without polling, until at least `count` sleeps are suspended on this clock: the
  /// moment a test may advance past them.
  public func waitForSleepers(_ count: Int = 1) async {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool in
        if state.sleepers.count >= count { return true }
        state.watchers.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private func wake(_ id: Int, throwing error: any Error) {
    let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
    sleeper?.continuation.resume(throwing: error)
  }

  private static func satisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>]
  {
    let count = state.sleepers.count
    let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
    state.watchers.removeAll { $0.count <= count }
    return ready
  }
}
