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

/// Time measured on an injected clock, so the same code reports real milliseconds in `kernel`
/// and exact, advanced-by-hand ones under a test clock.
///
/// Swift's `any Clock<Duration>` hides its `Instant` type; a stopwatch keeps the instant it was
/// started at inside a closure, so code that holds only the existential can still measure.
package struct Stopwatch: Sendable {
  private let read: @Sendable () -> Duration

  /// Starts measuring now, on `clock`.
  public init(_ clock: any Clock<Duration>) {
    read = Self.reading(clock)
  }

  /// Opens the existential: the instant type is known here.
  private static func reading<C: Clock>(_ clock: C) -> @Sendable () -> Duration
  where C.Duration == Duration {
    let start = clock.now
    return { start.duration(to: clock.now) }
  }

  /// The time since the stopwatch started.
  public var elapsed: Duration { read() }

  /// The time since the stopwatch started, in whole milliseconds (for logs and footers).
  public var milliseconds: Int { elapsed.wholeMilliseconds }
}

extension Duration {
  /// This duration in seconds.
  public var seconds: Double {
    Double(components.seconds) + Double(components.attoseconds) / 1e18
  }

  /// This duration in whole milliseconds, rounded down.
  public var wholeMilliseconds: Int {
    let parts = components
    let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1000)
    if overflow { return parts.seconds < 0 ? Int(Int64.min) : Int(Int64.max) }
    return Int(whole) + Int(parts.attoseconds / 1_000_000_000_000_000)
  }
}
