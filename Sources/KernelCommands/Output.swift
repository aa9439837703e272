import Foundation

/// Where a run writes: results (standard output) and everything else (standard error).
/// `main` gives the process's own (`standard`); a test gives a `CapturedOutput`'s and reads
/// what a command wrote, with no process and no pipe.
public struct Output: Sendable {
  /// Writes part of the results as given; throws an `OutputFailure` when they cannot be written.
  let result: @Sendable (String) throws -> Void
  /// Writes text for people on standard error; a failure is ignored: there is nowhere left
  /// to say it.
  let diagnostic: @Sendable (String) -> Void
  /// Whether progress is shown (standard error is a terminal).
  public let showsProgress: Bool

  /// Output written by `result` (standard output; it may fail) and `diagnostic` (standard error);
  /// `showsProgress` when the latter is a terminal.
  public init(
    result: @escaping @Sendable (String) throws -> Void,
    diagnostic: @escaping @Sendable (String) -> Void, showsProgress: Bool = false
  ) {
    self.result = result
    self.diagnostic = diagnostic
    self.showsProgress = showsProgress
  }

  /// The process's standard output and standard error.
  public static let standard = Output(
    result: { try Terminal.writeStandardOutput($0) },
    diagnostic: { Terminal.writeStandardError($0) }, showsProgress: isatty(STDERR_FILENO) == 1)
}

/// The results of a run could not be written: exit 74 with one sentence, or 141, quietly, when
/// their reader has gone (as SIGPIPE would end the process).
package struct OutputFailure: Error, Sendable {
  /// 74 or 141.
  public let code: Int32
  /// Why, as the system says it; nil when the reader has gone.
  public let reason: String?

  /// A failure to write with exit `code`, for `reason`.
  public init(code: Int32, reason: String?) {
    self.code = code
    self.reason = reason
  }
}
