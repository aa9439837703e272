import Synchronization

/// What a run wrote, kept in memory: give `output` to `CommandLineApp.run(_:output:)` and read
/// `standardOutput` and `standardError` after, as a person would see them.
public final class CapturedOutput: Sendable {
  private let written = Mutex((standardOutput: "", standardError: ""))

  /// Nothing written yet.
  public init() {}

  /// Writes here; `showsProgress` as a terminal would.
  public func output(showsProgress: Bool = false) -> Output {
    Output(
      result: { text in self.written.withLock { $0.standardOutput += text } },
      diagnostic: { text in self.written.withLock { $0.standardError += text } },
      showsProgress: showsProgress)
  }

  /// Everything written to standard output so far.
  public var standardOutput: String { written.withLock { $0.standardOutput } }
  /// Everything written to standard error so far.
  public var standardError: String { written.withLock { $0.standardError } }
}
