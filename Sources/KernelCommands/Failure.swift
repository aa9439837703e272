import ArgumentParser
import Composition
import Domain
import Foundation

/// Turns any error into one sentence on stderr and the contract's exit code (sysexits):
/// 64 usage, 65 bad data or a refused request, 66 not found, 69 unreachable or unavailable,
/// 77 authentication, 78 config, 70 anything else.
public enum Failure {
  /// Prints what `thrown` calls for and returns its exit code.
  static func report(_ thrown: any Error) -> Int32 {
    // A container that could not be built because of one cause (a cache that cannot be
    // opened) reports that cause and its code.
    let error = cause(thrown)
    if let code = error as? ExitCode { return code.rawValue }
    if let failure = error as? OutputFailure {
      if let reason = failure.reason {
        let name = CommandLineApp.current.app.name
        Terminal.error("\(name) could not write its output: \(reason); nothing more was written.")
      }
      return failure.code
    }
    // ArgumentParser's own errors (help, version, usage) are the ones it gives a code other
    // than plain failure: its message, written here so a failed write is seen.
    // Its code is asked once: each asking builds the help of the whole command stack.
    if !(error is UsageError), ServiceFailure.of(error) == nil,
      case let code = AppCommand.exitCode(for: error), code != .failure
    {
      let message = AppCommand.fullMessage(for: error)
      if code == .success {
        if !message.isEmpty {
          do { try Terminal.print(message) } catch { return report(error) }
        }
      } else {
        Terminal.error(message)
      }
      return code.rawValue
    }
    Terminal.error(sentence(error))
    return code(for: error)
  }

  /// The error to report for `error`: a container's one root cause, else the error itself.
  static func cause(_ error: any Error) -> any Error {
    KernelApp.rootCause(of: error)
  }

  /// The exit code `error` calls for.
  public static func code(for thrown: any Error) -> Int32 {
    let error = cause(thrown)
    if error is UsageError { return 64 }
    return ServiceFailure.of(error).map(code) ?? 70
  }

  /// The exit code of a classified failure.
  public static func code(_ failure: ServiceFailure) -> Int32 {
    switch failure {
    case .unreachable, .unavailable, .cancelled: 69
    case .rejected, .conflict, .badData: 65
    case .notFound: 66
    case .authentication: 77
    case .configuration: 78
    case .output: 74
    }
  }

  /// The error's own description, as one line ending in a full stop.
  public static func sentence(_ error: any Error) -> String {
    var text = "\(cause(error))".replacingOccurrences(of: "\n", with: " ")
      .trimmingCharacters(in: .whitespaces)
    if let last = text.last, !".!?".contains(last) { text += "." }
    return text
  }
}
