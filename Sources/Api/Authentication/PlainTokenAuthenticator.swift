import Domain
import Foundation
import HTTPTypes

extension AuthToken: AuthenticationCredential {}

/// The 2017 talk's authentication: a token from a GET (`auth`) answered as plain text or at a
/// key path of its JSON, sent in a header (`Authorization: Bearer …`, or the talk's bare
/// `AUTH_TOKEN: …`). It needs no login: a refresh fetches a new token. Config:
/// `plainToken(route: auth, keyPath: info.token)`.
public struct PlainTokenAuthenticator: Authenticator {
  /// The name it is registered under, which a stored plain token names.
  public static let name = "plainToken"

  /// The request that fetches a token.
  public let request: ApiRequest<String>
  /// The header the token goes in, and the scheme written before it (nil: the bare token).
  public let header: String
  /// The scheme written before the token; nil for the bare token.
  public let scheme: String?

  /// Fetches a token with `request` and sends it in `header` after `scheme`.
  public init(
    request: ApiRequest<String> = .token(), header: String = AuthToken.defaultHeader,
    scheme: String? = AuthToken.defaultScheme
  ) {
    self.request = request
    self.header = header
    self.scheme = scheme
  }

  public var kind: String { "plain token from \(request.route)" }

  public var secretHeaders: Set<String> { [header.lowercased()] }

  public func apply(_ credential: AuthToken, to request: inout HTTPRequest) {
    request.set(header, scheme.map { "\($0) \(credential.secret)" } ?? credential.secret)
  }

  public func refresh(_ current: AuthToken?, in context: AuthenticationContext) async throws
    -> AuthToken
  {
    AuthToken(try await context.client.send(request))
  }
}

extension AuthenticationInterceptor {
  /// The talk's plain token (`GET auth`), in `Authorization: Bearer …`, registered as
  /// `plainToken`.
  public static func plainToken(
    _ authenticator: PlainTokenAuthenticator = PlainTokenAuthenticator(),
    clock: any Clock<Duration> = ContinuousClock(), wallClock: WallClock = .system
  ) -> AuthenticationInterceptor {
    AuthenticationInterceptor(
      authenticator, name: PlainTokenAuthenticator.name, clock: clock, wallClock: wallClock)
  }
}
