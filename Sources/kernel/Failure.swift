import ArgumentParser
import Composition
import Domain
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Turns any error into one sentence on stderr and the contract's exit code (sysexits).
enum Failure {
  static func exit(with error: any Error) -> Never {
    if let usage = error as? UsageError {
      Terminal.error(usage.description)
      Kernel.exit(withError: ExitCode(64))
    }
    if let code = error as? ExitCode { Kernel.exit(withError: code) }
    guard let failure = ServiceFailure.of(error) else {
      // ArgumentParser's own errors: help, version, usage (64); else a plain sentence.
      if "\(type(of: error))".contains("CommandError") || error is ValidationError
        || error is CleanExit
      {
        Kernel.exit(withError: error)
      }
      Terminal.error(sentence(error))
      Kernel.exit(withError: ExitCode(70))
    }
    Terminal.error(sentence(error))
    Kernel.exit(withError: ExitCode(code(failure)))
  }

  /// The exit code `error` calls for.
  static func code(for error: any Error) -> Int32 {
    if error is UsageError { return 64 }
    return ServiceFailure.of(error).map(code) ?? 70
  }

  static func code(_ failure: ServiceFailure) -> Int32 {
    switch failure {
    case .unreachable, .unavailable, .cancelled: 69
    case .rejected, .badData: 65
    case .authentication: 77
    case .configuration: 78
    }
  }

  /// The error's own description, as one line ending in a full stop.
  static func sentence(_ error: any Error) -> String {
    var text = "\(error)".replacingOccurrences(of: "\n", with: " ")
      .trimmingCharacters(in: .whitespaces)
    if let last = text.last, !".!?".contains(last) { text += "." }
    return text
  }
}
