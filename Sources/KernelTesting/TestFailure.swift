import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A test's own failure, or a fixture asked for what it cannot make, as one sentence.
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  /// A failure said as `description`.
  public init(_ description: String) { self.description = description }
}
