import Domain
import Foundation
import HTTPTypes

/// How the client follows redirects. Transports never follow one themselves, so this one rule
/// holds on every platform and transport:
///
/// - 301, 302, 303, 307 and 308 with a `Location` are followed, up to `maximum` in a row; a 303
///   becomes a GET.
/// - A request with a body is not redirected: the redirect fails with `redirectRefused`, rather
///   than resend a body to an address the caller did not name (or drop it, as some would).
/// - A redirect to another scheme, host or port carries none of the client's secret headers
///   (`secret`): `Authorization`, `Proxy-Authorization`, `Cookie`, `secretHeaders`, the
///   adapters' own and the environment's token header.
/// - Only `http` and `https` addresses are followed, and plain `http` to a host other than
///   loopback only when the environment allows insecure http: the rule an environment's own
///   base URL is held to applies to every hop.
public struct Redirects: Sendable {
  /// The most redirects one request follows.
  public var maximum: Int
  /// Header names (any case) a request to another origin must not carry, besides the standard
  /// credentials: part of the client's one list (`ApiClient.secretHeaders`).
  public var secretHeaders: Set<String>

  /// At most `maximum` redirects, and `secretHeaders` beside the standard credentials.
  public init(maximum: Int = 10, secretHeaders: Set<String> = []) {
    self.maximum = maximum
    self.secretHeaders = Set(secretHeaders.map { $0.lowercased() })
  }

  static let statuses: Set<Int> = [301, 302, 303, 307, 308]
  static let credentials: Set<String> = ["authorization", "proxy-authorization", "cookie"]

  /// The request to send after `response` to `request`, or nil when it is not a redirect.
  /// `hops` is how many redirects were followed before this one.
  func next(
    after response: ApiResponse, to request: HTTPRequest, hasBody: Bool, hops: Int,
    environment: ApiEnvironment, secret: Set<String>
  ) throws -> HTTPRequest? {
    guard Self.statuses.contains(response.status),
      let location = response.headerFields[.location], let from = request.targetURL
    else { return nil }
    let fromText = from.absoluteString
    guard let to = URL(string: location, relativeTo: from)?.absoluteURL,
      let scheme = to.scheme?.lowercased(), scheme == "http" || scheme == "https", to.host != nil
    else {
      throw TransportError.redirectRefused(
        from: fromText, to: location, reason: "it does not lead to an http or https address")
    }
    if scheme == "http", !environment.allowsInsecureHTTP, !Loopback.isLoopback(to.host ?? "") {
      throw TransportError.redirectRefused(
        from: fromText, to: Redaction.url(to.absoluteString),
        reason:
          "it leads to plain http on a host that is not loopback, which environment"
          + " \(environment.name) does not allow")
    }
    if hops >= maximum {
      throw TransportError.redirectRefused(
        from: fromText, to: to.absoluteString, reason: "more than \(maximum) redirects")
    }
    if hasBody {
      throw TransportError.redirectRefused(
        from: fromText, to: to.absoluteString,
        reason: "a \(request.method) with a body is not resent to another address")
    }
    var method = request.method
    if response.status == 303 && method != .head { method = .get }
    var next = HTTPRequest(method, to, headerFields: request.headerFields)
    if Origin(from) != Origin(to) {
      next.headerFields = HTTPFields(
        next.headerFields.filter { !secret.contains($0.name.canonicalName) })
    }
    return next
  }
}
