import Domain
import Foundation
import Synchronization

/// Wall-clock time (`Date`) a test moves by hand: the cache's stored-at times and ages, an
/// HTTP-date `Retry-After`. Pass `clock.read` wherever Kernel takes `now: () -> Date`.
public final class TestWallClock: Sendable {
  private let current: Mutex<Date>

  /// Starts at `start` (by default a fixed moment in November 2023, never the real time).
  public init(_ start: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
    current = Mutex(start)
  }

  /// The time now, on this clock.
  public var now: Date { current.withLock { $0 } }

  /// `now` as a closure, for the `now:` parameters of layers and retriers.
  public var read: @Sendable () -> Date { { self.now } }

  /// This clock as the `WallClock` Kernel's composition registers: override it in a child.
  public var wallClock: WallClock { WallClock(read) }

  /// Moves the clock on by `seconds`.
  public func advance(_ seconds: TimeInterval) {
    current.withLock { $0 = $0.addingTimeInterval(seconds) }
  }
}
