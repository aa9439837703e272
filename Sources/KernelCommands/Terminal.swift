import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writing a run's output (the `Output` the run was given): results on stdout, everything else
/// on stderr.
///
/// Text for people goes through `escaped`, so control characters that came from the network (a
/// book's title, an api's error body) cannot drive the terminal; JSON is written exactly. A
/// result that cannot be written throws an `OutputFailure`: 141, quietly, when the reader has
/// gone; otherwise 74 with one sentence. A failure to write stderr is ignored: there is nowhere
/// left to say it.
public enum Terminal {
  private static var output: Output { CommandLineApp.current.output }

  /// A line for people: control characters escaped, newlines kept.
  public static func print(_ text: String) throws {
    try output.result(TerminalText.escaped(text) + "\n")
  }

  /// A line for scripts (JSON), exactly as given.
  public static func printExact(_ text: String) throws {
    try output.result(text + "\n")
  }

  /// Writes `text` to stdout as it is, with no newline: one part of a longer output.
  public static func printPart(_ text: String) throws {
    try output.result(text)
  }

  /// Writes `text` and a newline to stderr, control characters escaped.
  public static func error(_ text: String) {
    output.diagnostic(TerminalText.escaped(text) + "\n")
  }

  /// Writes `warning: text` to stderr.
  public static func warn(_ text: String) { error("warning: \(text)") }

  /// Asks on stderr, leaving the cursor after `text` for the answer.
  public static func prompt(_ text: String) {
    output.diagnostic(TerminalText.escaped(text))
  }

  /// Whether progress is shown: stderr is a terminal.
  public static var showsProgress: Bool { output.showsProgress }

  /// Rewrites the progress line in place.
  public static func progress(_ text: String) {
    output.diagnostic("\r\u{1B}[2K\(TerminalText.escaped(text))")
  }

  /// Clears the progress line.
  public static func endProgress() {
    output.diagnostic("\r\u{1B}[2K")
  }

  /// Standard descriptors the process started without. Each is pointed at /dev/null, so a file
  /// opened later (the cache database) can never become stdout; writing to a closed stdout is
  /// still an error. Written once by `guardStandardDescriptors`, before any task starts; only
  /// read after that.
  nonisolated(unsafe) private static var closedAtStart: Set<Int32> = []

  /// Called first thing in `main`, before any file is opened.
  public static func guardStandardDescriptors() {
    for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO]
    where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
      closedAtStart.insert(descriptor)
      let null = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
      if null >= 0 && null != descriptor {
        dup2(null, descriptor)
        close(null)
      }
    }
  }

  /// Writes `text` to the process's stdout.
  static func writeStandardOutput(_ text: String) throws {
    if closedAtStart.contains(STDOUT_FILENO) {
      throw OutputFailure(code: 74, reason: "standard output is closed")
    }
    let code = write(STDOUT_FILENO, text)
    if code == 0 { return }
    if code == EPIPE { throw OutputFailure(code: 141, reason: nil) }
    throw OutputFailure(code: 74, reason: String(cString: strerror(code)))
  }

  /// Writes `text` to the process's stderr, ignoring a failure.
  static func writeStandardError(_ text: String) {
    _ = write(STDERR_FILENO, text)
  }

  /// Writes all of `text` to `descriptor`, retrying short writes and interruptions; the errno
  /// of a failure, else 0.
  private static func write(_ descriptor: Int32, _ text: String) -> Int32 {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
      let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        return errno
      }
      bytes = bytes.dropFirst(written)
    }
    return 0
  }

  /// The most memory this process has held, in MB (resident set).
  public static var peakMemoryMegabytes: Int {
    var usage = rusage()
    #if canImport(Darwin)
      let who = RUSAGE_SELF
    #else
      let who = RUSAGE_SELF.rawValue
    #endif
    #if !canImport(Darwin)
      // The peak of this process's own memory since it started. `ru_maxrss` also keeps the
      // resident size of the process that forked it, up to the moment it ran this program.
      if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(
          line.dropFirst(6).trimmingCharacters(in: .whitespaces).prefix { $0.isNumber })
      {
        return kilobytes / (1 << 10)
      }
    #endif
    guard getrusage(Int32(who), &usage) == 0 else { return 0 }
    #if canImport(Darwin)
      return usage.ru_maxrss / (1 << 20)  // bytes
    #else
      return usage.ru_maxrss / (1 << 10)  // kilobytes
    #endif
  }
}

/// `write(2)`, out of reach of `Terminal.write`'s name.
/// Safe: `bytes` holds `count` bytes (`Terminal.write`).
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}

/// Text from outside (the network, a config file) made safe to show on a terminal.
public enum TerminalText {
  /// `text` with every control character written as `\x1B` (C0, DEL, C1) and the bidirectional
  /// overrides that can reorder what a person reads written as `\u{202E}`; newlines are kept
  /// unless `keepingNewlines` is false, as in a table's cell. Tabs are kept.
  public static func escaped(_ text: String, keepingNewlines: Bool = true) -> String {
    guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines) }) else {
      return text
    }
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard needsEscape(scalar, keepingNewlines) else {
        out.append(scalar)
        continue
      }
      let hex = String(scalar.value, radix: 16, uppercase: true)
      let shown = scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
      out.append(contentsOf: shown.unicodeScalars)
    }
    return String(out)
  }

  private static func needsEscape(_ scalar: Unicode.Scalar, _ keepingNewlines: Bool) -> Bool {
    switch scalar.value {
    case 0x0A: !keepingNewlines
    case 0x09: false
    case 0x00...0x1F, 0x7F...0x9F: true
    case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}

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
