import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writing to the terminal: results on stdout, everything else on stderr.
enum Terminal {
  static func print(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
  }

  static func error(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }

  static func warn(_ text: String) { error("warning: \(text)") }

  /// Whether stderr is a terminal: progress is shown there and only there.
  static var showsProgress: Bool { isatty(STDERR_FILENO) == 1 }

  /// Rewrites the progress line in place.
  static func progress(_ text: String) {
    FileHandle.standardError.write(Data("\r\u{1B}[2K\(text)".utf8))
  }

  /// The most memory this process has held, in MB (resident set).
  static var peakMemoryMegabytes: Int {
    var usage = rusage()
    #if canImport(Darwin)
      let who = RUSAGE_SELF
    #else
      let who = RUSAGE_SELF.rawValue
    #endif
    guard getrusage(Int32(who), &usage) == 0 else { return 0 }
    #if canImport(Darwin)
      return usage.ru_maxrss / (1 << 20)  // bytes
    #else
      return usage.ru_maxrss / (1 << 10)  // kilobytes
    #endif
  }

  static func milliseconds(_ duration: Duration) -> Int {
    Int(
      duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
  }

  static func endProgress() {
    FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8))
  }
}
