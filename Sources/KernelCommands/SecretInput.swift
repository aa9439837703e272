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
  /// The longest secret read: a password or a key fits many times over.
  static let limit = 4096

  /// One line of standard input, without its line end, read a byte at a time up to the first
  /// newline (so nothing after it is consumed) and at most `limit` bytes; empty input, or a line
  /// longer than that (`</dev/zero`), is refused.
  static func line(naming what: String) throws -> String {
    var bytes: [UInt8] = []
    var byte: UInt8 = 0
    while true {
      let count = read(STDIN_FILENO, &byte, 1)
      if count < 0 && errno == EINTR { continue }
      guard count == 1, byte != UInt8(ascii: "\n") else { break }
      guard bytes.count < limit else {
        throw UsageError(
          "The \(what) on standard input is longer than \(limit) bytes; pipe in one line.")
      }
      bytes.append(byte)
    }
    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
    guard !bytes.isEmpty else {
      throw UsageError("No \(what) on standard input: pipe it in, one line.")
    }
    return String(decoding: bytes, as: UTF8.self)
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
    // Ctrl-C at the prompt puts echo back before the process ends (exit 130, as the shell's).
    let saved = original
    signal(SIGINT, SIG_IGN)
    let interrupt = DispatchSource.makeSignalSource(signal: SIGINT)
    interrupt.setEventHandler {
      var restored = saved
      tcsetattr(STDIN_FILENO, TCSAFLUSH, &restored)
      Terminal.error("")
      exit(130)
    }
    interrupt.resume()
    defer {
      interrupt.cancel()
      signal(SIGINT, SIG_DFL)
    }
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
