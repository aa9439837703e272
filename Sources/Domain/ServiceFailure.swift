import Foundation

/// What kind of failure an error is, so callers can react without knowing which layer threw:
/// the command front picks its exit code by it, a cache layer decides whether to fall back.
public enum ServiceFailure: String, Sendable, Hashable {
  /// The service could not be reached: no connection, a timeout, a lost connection.
  case unreachable
  /// It was reached but could not answer now (5xx after its retries).
  case unavailable
  /// What was asked for does not exist there (404, 410): an unknown id.
  case notFound
  /// It refused the request (4xx other than authentication, not found and conflict).
  case rejected
  /// The request conflicts with what the server holds now (409, or 412 on a precondition):
  /// a write made against an older copy.
  case conflict
  /// Authentication failed or was refused.
  case authentication
  /// It answered with data that could not be read.
  case badData
  /// The request was cancelled.
  case cancelled
  /// Local configuration or storage is at fault.
  case configuration
  /// A file the caller named cannot be written: a download's destination that is a folder or a
  /// link, a folder that does not exist, a full disk, another run writing the same file.
  case output
}

/// An error that only carries another, the one to report (a library's wrapper around what its
/// transport threw).
package protocol WrappingError: Error {
  /// The error to report in its place.
  var wrapped: any Error { get }
}

/// An error that says what kind of failure it is.
public protocol ClassifiedError: Error {
  /// What kind of failure it is.
  var failure: ServiceFailure { get }
}

extension ServiceFailure {
  /// The failure an HTTP status says, as every refusal Kernel reports it (`HTTPFailure`): 404
  /// and 410 `notFound`; 409 and 412 `conflict`; 401 and 403 `authentication`; 408, 429 and 5xx
  /// `unavailable`; any other `rejected`. What an app's own error for a status should carry: a
  /// generated client's undocumented answer, say.
  public init(status: Int) {
    self =
      switch status {
      case 404, 410: .notFound
      case 409, 412: .conflict
      case 401, 403: .authentication
      case 408, 429, 500...: .unavailable
      default: .rejected
      }
  }

  /// The failure `error` carries, `.cancelled` for task cancellation, else nil.
  public static func of(_ error: any Error) -> ServiceFailure? {
    if let wrapper = error as? any WrappingError { return of(wrapper.wrapped) }
    if let classified = error as? any ClassifiedError { return classified.failure }
    if error is CancellationError { return .cancelled }
    return nil
  }
}

/// `error`'s description without its closing full stop: a clause said inside another sentence
/// (`… could not be read (GET movies/1 answered …); do not send it again.`).
package func clause(_ error: Any) -> String {
  var text = "\(error)"
  while text.hasSuffix(".") { text.removeLast() }
  return text
}

extension StringProtocol {
  /// This text opening a sentence, its first letter a capital: a call's summary (`a rating of
  /// movie 9`) as the subject of a message (`A rating of movie 9 was not sent: …`).
  package var openingASentence: String { prefix(1).uppercased() + dropFirst() }
}
