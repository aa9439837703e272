import Foundation

/// A fixture asked for something it cannot make.
public struct FixtureError: Error, CustomStringConvertible {
  public let description: String
}
