import Domain
import Foundation
import HTTPTypes

/// Everything the API layer reports. Each description is one sentence naming the route (or
/// environment, or file), what went wrong and, where there is one, what to do.
public enum ApiError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// An `http://` base URL to a host other than loopback without the insecure flag.
  case insecureEnvironment(name: String, url: String)
  /// The environment `name` cannot be used, for `reason`.
  case invalidEnvironment(name: String, reason: String)
  /// No connection could be made, or it was lost.
  case unreachable(route: Route, host: String, reason: String)
  /// A try of `route` to `host` took too long.
  case timedOut(route: Route, host: String)
  /// The whole call, retries included, ran past its deadline (`ApiClient.deadline`).
  case deadlineExceeded(route: Route, seconds: Int)
  /// The server answered with a status the request does not accept: kept whole, with the
  /// message its body carries.
  case status(HTTPFailure)
  /// A redirect was not followed: it would have dropped the request's body, or looped.
  case redirectRefused(route: String, location: String, reason: String)
  /// The answer's body was larger than the transport takes.
  case tooLarge(route: Route, host: String, limit: Int)
  /// The answer's header was larger than the transport takes.
  case headerTooLarge(route: Route, host: String)
  /// The route cannot be sent as it is (a body on a GET or HEAD): a mistake in the code that
  /// built it.
  case invalidRoute(route: Route, reason: String)
  /// The transport cannot work here (its library is missing); `reason` says what to install.
  case transportUnavailable(route: Route, reason: String)
  /// The answer's `Content-Type` is not one the route accepts (`Route.acceptableContentTypes`).
  case unacceptableContentType(route: Route, contentType: String, accepted: [String])
  /// The body does not fit what the route returns; `field` is its path, e.g. `cast[2].name`.
  case decoding(route: Route, field: String, reason: String)
  /// An envelope (`{"success": 0, ...}`) reported failure.
  case envelopeFailure(route: Route, message: String)
  /// The saved api context could not be read or written.
  case contextStorage(file: String, reason: String)
  /// A refused credential that no refresh could cure, or a login or refresh that failed;
  /// `underlying` is what the authenticator threw, when it threw (`underlyingError`).
  case authenticationFailed(route: Route, reason: String, underlying: (any Error)? = nil)
  /// More credential refreshes than allowed in a short time: something keeps invalidating them.
  case excessiveRefresh(route: Route, count: Int, seconds: Int)
  /// The server asked to retry later than this client waits.
  case retryAfterTooLong(route: Route, seconds: Int, cap: Int)
  /// A download could not be completed into `file`: its body could not be written, or was not
  /// the length announced. Nothing was put in place.
  case download(route: Route, file: String, reason: String)
  /// A download's destination cannot be written: it is a folder or a link, its folder is
  /// missing, the disk refused a write, or another download of it is under way. Nothing was put
  /// in place. `underlying` is the system's error when it named one (`underlyingError as?
  /// POSIXError`, e.g. `.ENOSPC` for a full disk).
  case output(route: Route, file: String, reason: String, underlying: (any Error)? = nil)

  /// Whether the api took the request, answering with a status the route accepts, and only its
  /// answer is refused (its `Content-Type`): a write so answered was applied, and must not be
  /// sent again.
  public var isRefusedAnswerToATakenRequest: Bool {
    if case .unacceptableContentType = self { true } else { false }
  }

  /// The error an authenticator threw, when a refresh or login failed with one: an app's own
  /// error type is caught as itself (`error.underlyingError as? MyRefreshError`), as with
  /// Alamofire's `AFError.underlyingError`; for a download's file the system refused, the
  /// system's error (`POSIXError`).
  public var underlyingError: (any Error)? {
    switch self {
    case .authenticationFailed(_, _, let underlying), .output(_, _, _, let underlying):
      return underlying
    default: return nil
    }
  }

  /// What kind of failure it is, and so the exit code.
  public var failure: ServiceFailure {
    switch self {
    case .insecureEnvironment, .invalidEnvironment, .contextStorage: .configuration
    case .unreachable, .timedOut, .deadlineExceeded: .unreachable
    case .authenticationFailed, .excessiveRefresh: .authentication
    case .retryAfterTooLong, .transportUnavailable: .unavailable
    case .status(let failure): failure.kind
    case .redirectRefused, .envelopeFailure: .rejected
    case .decoding, .tooLarge, .headerTooLarge, .unacceptableContentType, .download: .badData
    case .invalidRoute: .rejected
    case .output: .output
    }
  }

  public var description: String {
    switch self {
    case .insecureEnvironment(let name, let url):
      "Environment \(name) uses plain http to a host that is not loopback (\(url)); use https,"
        + " or allow it (allowsInsecureHTTP) if sending tokens in the clear is really intended."
    case .invalidEnvironment(let name, let reason):
      "Environment \(name) is not usable: \(reason)."
    case .unreachable(let route, let host, let reason):
      "\(route) could not reach \(host) (\(reason)); check that the server is running and the"
        + " environment's base URL is right."
    case .timedOut(let route, let host):
      "\(route) to \(host) timed out; the server is slow or unreachable."
    case .deadlineExceeded(let route, let seconds):
      "\(route) did not finish within \(seconds) s, retries included; the server is too slow"
        + " (the limit is timeouts.callSeconds)."
    case .status(let failure): failure.description
    case .redirectRefused(let route, let location, let reason):
      "\(route) was redirected to \(location) and not followed: \(reason)."
    case .tooLarge(let route, let host, let limit):
      "\(route) from \(host) answered a body of more than \(limit) bytes once decoded, more than"
        + " this client takes."
    case .headerTooLarge(let route, let host):
      "\(route) from \(host) answered with a header larger than this client takes (100 KB);"
        + " the server sent too much in its headers, and sending again will not help."
    case .invalidRoute(let route, let reason):
      "\(route) cannot be sent: \(reason)."
    case .transportUnavailable(let route, let reason):
      "\(route) could not be sent: \(reason)."
    case .unacceptableContentType(let route, let contentType, let accepted):
      "\(route) answered \(Self.said(contentType)), not"
        + " \(accepted.sorted().joined(separator: " or ")) as it accepts."
    case .decoding(let route, let field, let reason):
      "\(route) answered data that does not fit\(field.isEmpty ? "" : " at \(field)"): \(reason)."
    case .envelopeFailure(let route, let message):
      "\(route) reported failure: \(message)."
    case .contextStorage(let file, let reason):
      "The api context file \(file) could not be used: \(reason)."
    case .authenticationFailed(let route, let reason, _):
      "\(route) was refused for want of a valid credential: \(reason)."
    case .excessiveRefresh(let route, let count, let seconds):
      "\(route) needed a new credential, but \(count) were already fetched in the last"
        + " \(seconds) seconds; something keeps invalidating them, so no more are fetched for now."
    case .download(let route, let file, let reason):
      "\(route) could not be saved to \(file): \(reason); nothing was put in place."
    case .output(let route, let file, let reason, _):
      "\(route) was not saved to \(file): \(reason)."
    case .retryAfterTooLong(let route, let seconds, let cap):
      "\(route) was asked to retry after \(seconds) s, longer than the \(cap) s this client waits;"
        + " try again later."
    }
  }

  /// A `Content-Type` as a sentence names it: `text/html; charset=utf-8`, or "no Content-Type".
  static func said(_ contentType: String) -> String {
    let trimmed = contentType.trimmingCharacters(in: .whitespaces)
    return trimmed.isEmpty ? "no Content-Type" : excerpt(trimmed, limit: 120)
  }

  /// The first `limit` characters of a body, on one line, for error messages.
  static func excerpt(_ body: Data, limit: Int = 120) -> String {
    excerpt(String(decoding: body.prefix(limit * 4), as: UTF8.self), limit: limit)
  }

  /// The first `limit` characters of what a server said, on one line, for error messages: a
  /// message of any size (a 50 MB `error.message`) is cut, never printed whole.
  public static func excerpt(_ said: String, limit: Int = 300) -> String {
    let text = said.prefix(limit * 2).split(whereSeparator: \.isNewline).joined(separator: " ")
      .trimmingCharacters(in: .whitespaces)
    return text.count > limit || said.count > limit * 2 ? String(text.prefix(limit)) + "…" : text
  }
}

/// An answer whose status the request does not accept (2xx by default), kept whole: its
/// status, header fields and body, the message the body carries and, when the request names
/// the type of its error bodies (`ApiRequest(_:mapping:errorBody:)`), that body decoded.
///
/// ```swift
/// catch ApiError.status(let failure) where failure.status == 422 {
///   let problem = failure.decoded(as: Problem.self)
/// }
/// ```
public struct HTTPFailure: Sendable, CustomStringConvertible, ClassifiedError {
  /// The route answered.
  public var route: Route
  /// The status it was answered with.
  public var status: Int
  /// The answer's header fields.
  public var headerFields: HTTPFields
  /// The answer's body.
  public var body: Data
  /// What the body says went wrong: the error body's own description, or the string at one of
  /// the mapping's message key paths (`{"error": {"message": …}}`), or an excerpt of the body.
  public var message: String
  /// The error body as the request's `errorBody` type, when it names one and the body is one.
  public var decodedBody: (any Sendable)?

  /// A failure of these values; the message read from the body when none is given.
  public init(
    route: Route, status: Int, headerFields: HTTPFields = [:], body: Data = Data(),
    message: String? = nil, decodedBody: (any Sendable)? = nil
  ) {
    self.route = route
    self.status = status
    self.headerFields = headerFields
    self.body = body
    self.message = ApiError.excerpt(
      message ?? JSONMapping.body.message(in: body) ?? ApiError.excerpt(body))
    self.decodedBody = decodedBody
  }

  /// The answer's `ETag`: the server's current version, on a 412.
  public var etag: String? { headerFields[.eTag] }

  /// The error body as `type`, or nil when it was not decoded as one.
  public func decoded<T>(as type: T.Type) -> T? { decodedBody as? T }

  /// What its status says (`ServiceFailure(status:)`): 404 and 410 are `notFound`; 409 and 412
  /// `conflict`; 401 and 403 `authentication`; 5xx, 408 and 429 `unavailable`; any other
  /// `rejected`.
  public var failure: ServiceFailure { kind }

  /// The kind its status says (above).
  public var kind: ServiceFailure { ServiceFailure(status: status) }

  /// `GET books/9 was not found (HTTP 404): no book has id 9.`, and for other 4xx and 5xx a
  /// sentence that says which side failed.
  public var description: String {
    let said = message.isEmpty ? "" : ": \(message)"
    return switch status {
    case 404, 410: "\(route) was not found (HTTP \(status))\(said)."
    case 500...: "\(route) failed at the api (HTTP \(status))\(said); try again later."
    case 400..<500: "\(route) was refused by the api (HTTP \(status))\(said)."
    default: "\(route) answered HTTP \(status)\(said)."
    }
  }
}
