import Foundation

/// Collects what a sample prints: shadow `print` in the test,
/// `func print(_ value: Any) { output.print("\(value)") }`, and compare `all` with the sample's
/// `Snippets.expectedOutput`.
public final class PrintedLines: Sendable {
  private let lines = Recorder<String>()

  /// Nothing printed yet.
  public init() {}

  /// Records `text`, split at line breaks, as `print` would write it.
  public func print(_ text: String) {
    for line in text.components(separatedBy: "\n") { lines.append(line) }
  }

  /// Every line printed so far.
  public var all: [String] { lines.all }
}
