import Foundation

/// A fixture asked for something it cannot make: what a test's own fixtures throw too.
public struct FixtureError: Error, CustomStringConvertible {
  public let description: String

  /// A fixture problem, said as `description`.
  public init(description: String) { self.description = description }
}
