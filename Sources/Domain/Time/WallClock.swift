import Foundation

/// The calendar time an app reads: when a copy was stored, how old it is, what an HTTP date
/// means. Monotonic time (delays, timeouts, durations) is a Swift `Clock` instead. Registered in
/// the container, so a test gives every layer the same clock it moves by hand.
public struct WallClock: Sendable {
  /// The time now, on this clock.
  public let now: @Sendable () -> Date

  /// A wall clock that reads `now`; tests give one they move by hand.
  public init(_ now: @escaping @Sendable () -> Date) { self.now = now }

  /// The system's time.
  public static var system: WallClock { WallClock { Date() } }
}
