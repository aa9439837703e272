/// Where jitter comes from: the system generator in an app, a fixed or scripted value in a test,
/// so a test can assert the exact delay a retrier asked for. Registered in the container like
/// any other part (the composition gives every retrier the same one).
public struct RandomSource: Sendable {
  private let draw: @Sendable (ClosedRange<Double>) -> Double

  /// A source that answers `draw(range)`; the answer is clamped into the range.
  public init(_ draw: @escaping @Sendable (ClosedRange<Double>) -> Double) { self.draw = draw }

  /// A value from `range`.
  public func next(in range: ClosedRange<Double>) -> Double {
    min(max(draw(range), range.lowerBound), range.upperBound)
  }

  /// The system's generator.
  public static var system: RandomSource { RandomSource { Double.random(in: $0) } }

  /// Always the same point of the range: 0 is its lower bound, 1 its upper bound.
  public static func fixed(_ fraction: Double) -> RandomSource {
    RandomSource { $0.lowerBound + ($0.upperBound - $0.lowerBound) * fraction }
  }
}
