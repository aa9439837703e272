import Synchronization

/// A clock on which every sleep returns at once, its length recorded (`sleeps`): for tests where
/// waits happen but only their length matters. Its time stands still, so a sleep's length is
/// exact however many tasks sleep at once (a sleep for a duration becomes a sleep until `now`
/// plus it; were time moved by one task's sleep, another's would be recorded short).
public final class ImmediateClock: Clock, Sendable {
  /// A point of its time: an offset from its start.
  public typealias Instant = TestClock.Instant

  private let state = Mutex((now: Instant(offset: .zero), asked: [Duration]()))

  /// A clock at offset zero.
  public init() {}

  /// The time now: how far sleeps have moved it.
  public var now: Instant { state.withLock { $0.now } }

  /// None: any duration is exact.
  public var minimumResolution: Duration { .zero }

  /// Every sleep asked of this clock, in order.
  public var sleeps: [Duration] { state.withLock { $0.asked } }

  /// Moves the time to `deadline` at once; throws when the task is cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    state.withLock { state in
      state.asked.append(state.now.duration(to: deadline))
    }
    await Task.yield()
  }
}
