import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A secret typed by the user: never an argument (it would show in `ps` and the shell's
/// history). Read from the terminal with echo off, or one line from standard input when the
/// command says so (`--password-stdin`, as `docker login` does).
enum SecretInput {
  /// One line of standard input, without its line end; empty input is refused.
  static func line(naming what: String) throws -> String {
    guard let line = Swift.readLine(strippingNewline: true), !line.isEmpty else {
      throw UsageError("No \(what) on standard input: pipe it in, one line.")
    }
    return line.hasSuffix("\r") ? String(line.dropLast()) : line
  }

  /// What the user types at `prompt` on the terminal, not echoed. Standard input must be the
  /// terminal; otherwise the sentence says to pipe it with `stdinFlag`.
  static func typed(_ prompt: String, stdinFlag: String) throws -> String {
    guard isatty(STDIN_FILENO) == 1 else {
      throw UsageError(
        "The password is read from the terminal, and standard input is not one; pipe it in with"
          + " \(stdinFlag).")
    }
    var original = termios()
    guard tcgetattr(STDIN_FILENO, &original) == 0 else {
      throw UsageError(
        "The terminal's settings could not be read; pipe the password in with \(stdinFlag).")
    }
    var silent = original
    silent.c_lflag &= ~tcflag_t(ECHO)
    // Echo goes off before the prompt shows, so nothing typed after it is ever echoed.
    tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
    Terminal.prompt(prompt)
    defer {
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
      Terminal.error("")
    }
    return try line(naming: "password")
  }
}
