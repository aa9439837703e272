import Domain
import Foundation
import HTTPTypes

/// How an api's requests prove who sends them: Kernel's built-ins (`PlainTokenAuthenticator`,
/// `OAuth2Authenticator`, `ApiKeyAuthenticator`, `BasicAuthenticator`) and an app's own, each
/// with a credential type of its own. An `AuthenticationInterceptor` runs one for a client: it
/// keeps the
/// credential per origin in the api context, applies it to every request to the environment's
/// origin, refreshes it once for every request waiting (and before it expires), and replays
/// what a refused credential failed.
///
/// Alamofire's `Authenticator` is the model:
///
/// ```swift
/// struct SessionAuthenticator: Authenticator {
///   struct Credential: AuthenticationCredential { let session: String }
///   var kind: String { "session cookie" }
///   func apply(_ credential: Credential, to request: inout HTTPRequest) {
///     request.headerFields[.cookie] = "session=\(credential.session)"
///   }
///   func refresh(_ current: Credential?, in context: AuthenticationContext) async throws
///     -> Credential
///   {
///     let session = Route.post("session", body: .bytes(Data()))
///     return Credential(session: try await context.client.send(.init(session)))
///   }
/// }
/// ```
public protocol Authenticator: Sendable {
  /// What it issues and applies: a token, a key.
  associatedtype Credential: AuthenticationCredential
  /// What `auth status` calls this kind of credential: `OAuth 2.0 (password grant)`.
  var kind: String { get }
  /// The headers the credential travels in, lower-cased: redacted in every trace, and never
  /// carried by a request redirected to another origin. `authorization` unless said otherwise.
  var secretHeaders: Set<String> { get }
  /// The query items the credential travels in (`api_key`): redacted in every trace. None
  /// unless said otherwise.
  var secretQueryItems: Set<String> { get }
  /// A credential it has without sending anything (an API key or a password from the config),
  /// used while the context keeps none; never stored. None by default.
  func standingCredential(for environment: ApiEnvironment) -> Credential?
  /// Whether `refresh(nil, in:)` gets a credential without the user (OAuth's client
  /// credentials): then a request made while the context keeps none gets one first, instead of
  /// going out without one (a POST's body included) and waiting for the 401. False by default.
  var obtainsCredentialUnattended: Bool { get }
  /// Puts `credential` on `request`, a request to the environment's own origin.
  func apply(_ credential: Credential, to request: inout HTTPRequest)
  /// A new credential: a refresh of `current`, or, with none, one the authenticator can get on
  /// its own (client credentials, the talk's `GET auth`). Throws
  /// `AuthenticationError.loginRequired` when only a login can give one, and
  /// `AuthenticationError.revoked` when the server refused `current` for good (its credential is
  /// then dropped).
  func refresh(_ current: Credential?, in context: AuthenticationContext) async throws
    -> Credential
  /// A credential from what the user gave `auth login` (a password grant); by default the
  /// credential `refresh(nil, in:)` gets, which needs no login.
  func login(_ login: Login, in context: AuthenticationContext) async throws -> Credential
  /// Whether `response` to `request` says the credential was refused, so a refresh may help:
  /// a 401 by default (an API may say 403, or say so in the body).
  func isAuthenticationFailure(_ response: ApiResponse, to request: HTTPRequest) -> Bool
  /// Whether `request` went out with `credential`: a request sent with an older one is replayed
  /// with the current one, without a refresh. By default: every secret header and query item
  /// `apply` sets has the value it sets.
  func isRequest(_ request: HTTPRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
  public func standingCredential(for environment: ApiEnvironment) -> Credential? { nil }

  public var obtainsCredentialUnattended: Bool { false }

  public var secretHeaders: Set<String> { ["authorization"] }

  public var secretQueryItems: Set<String> { [] }

  public func login(_ login: Login, in context: AuthenticationContext) async throws -> Credential {
    try await refresh(nil, in: context)
  }

  /// The refresh of an authenticator whose only credential is the config's (an API key, a
  /// password): that credential while none was refused, else a sentence naming `setting`.
  public func configuredCredential(
    replacing current: Credential?, in context: AuthenticationContext, setting: String
  ) throws -> Credential {
    let key = "environments.\(context.environment.name).\(setting)"
    guard current == nil, let credential = standingCredential(for: context.environment) else {
      throw AuthenticationError.loginRequired(
        current == nil ? "nothing is configured; set \(key)" : "the api refused \(key)")
    }
    return credential
  }

  public func isAuthenticationFailure(_ response: ApiResponse, to request: HTTPRequest) -> Bool {
    response.status == 401
  }

  public func isRequest(_ request: HTTPRequest, authenticatedWith credential: Credential) -> Bool {
    var applied = request
    apply(credential, to: &applied)
    return applied.headerFields == request.headerFields && applied.path == request.path
  }
}

/// A credential an authenticator issues, kept per origin in the api context (as JSON, in the
/// persistent context's 0600 file). Its `description` should never show a secret.
public protocol AuthenticationCredential: Codable, Sendable, Equatable {
  /// When the server stops accepting it; nil when it does not say.
  var expiresAt: Date? { get }
  /// When it was issued: with `expiresAt`, its lifetime, which bounds how early it is refreshed.
  var issuedAt: Date? { get }
  /// Whom it speaks for (a user name or id) when that is known: a cache keeps each identity's
  /// answers apart, so one user's private answers never serve another (`CachingLayer`).
  var identity: String? { get }
}

extension AuthenticationCredential {
  public var expiresAt: Date? { nil }
  public var issuedAt: Date? { nil }
  public var identity: String? { nil }
}

/// What an authenticator gets and sends a credential with.
public struct AuthenticationContext: Sendable {
  /// Sends the authenticator's own requests (token, refresh) through the transport, the
  /// adapters, the redirect rule and the call deadline, but never through an authenticator and
  /// never with another call's conditional headers.
  public let client: ApiClient
  /// The environment the credential is for.
  public let environment: ApiEnvironment
  /// The time now, on the client's wall clock: when a credential is issued.
  public let now: Date

  /// A context of these values.
  public init(client: ApiClient, environment: ApiEnvironment, now: Date) {
    self.client = client
    self.environment = environment
    self.now = now
  }
}

/// What `auth login` was given. The password never comes from an argument.
public struct Login: Sendable {
  /// The user, when the grant needs one.
  public var username: String?
  /// The password, read from a terminal or a pipe.
  public var password: String?

  /// What the login was given.
  public init(username: String? = nil, password: String? = nil) {
    self.username = username
    self.password = password
  }
}

/// Why an authenticator could not give a credential.
public enum AuthenticationError: Error, Sendable, Equatable, CustomStringConvertible {
  /// Only a login can give one (`auth login`).
  case loginRequired(String)
  /// The server refused the credential for good (OAuth's `invalid_grant`): it is dropped, and
  /// a login is needed.
  case revoked(String)
  /// The server's answer to a credential request could not be used.
  case invalidAnswer(String)

  public var description: String {
    switch self {
    case .loginRequired(let reason), .revoked(let reason), .invalidAnswer(let reason): reason
    }
  }

  /// The same error, its reason put after `opening` and a colon.
  func opened(by opening: String) -> AuthenticationError {
    switch self {
    case .loginRequired(let reason): .loginRequired("\(opening): \(reason)")
    case .revoked(let reason): .revoked("\(opening): \(reason)")
    case .invalidAnswer(let reason): .invalidAnswer("\(opening): \(reason)")
    }
  }
}

extension AuthenticationError: ClassifiedError {
  /// A failed login or refresh: exit 77, like every refused credential.
  public var failure: ServiceFailure { .authentication }
}
