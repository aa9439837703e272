import Domain
import Foundation
import Synchronization

/// What every api service shares: the current environment and the credential for it. Changing
/// the environment takes effect on the next request of every service, with no re-resolving.
public protocol ApiContext: AnyObject, Sendable {
  /// The current environment.
  var environment: ApiEnvironment { get }
  /// The credential for the current environment's origin (scheme, host, port): a credential
  /// belongs to the origin it was issued for, never to a name, so it follows neither a switch
  /// to another environment nor a base URL pointed elsewhere.
  var credential: StoredCredential? { get }
  /// Makes `environment` the current one, from the next request of every service on.
  func use(_ environment: ApiEnvironment) throws
  /// Keeps `credential` for the current environment's origin; nil drops it.
  func store(credential: StoredCredential?) throws
  /// Replaces the current origin's credential `seen` with what `refresh` makes of it, one
  /// refresh at a time among everyone sharing this context (other processes on the same file
  /// too). `refresh` runs only while the stored credential is still `seen`, so a rotated
  /// refresh token is never spent twice, a refusal (`AuthenticationError.revoked`) drops only
  /// the credential it refused, and a logout is never undone; otherwise the stored one comes
  /// back as `.changed` and nothing is sent.
  func refreshCredential(
    replacing seen: StoredCredential?,
    with refresh: @Sendable (StoredCredential?) async throws -> StoredCredential
  ) async throws -> CredentialRefresh
}

/// How `ApiContext.refreshCredential(replacing:with:)` ended.
public enum CredentialRefresh: Sendable, Equatable {
  /// The refresh ran; its credential is stored.
  case refreshed(StoredCredential)
  /// The stored credential was no longer the one seen (another process refreshed it, or the
  /// user logged out: nil), so no refresh ran.
  case changed(StoredCredential?)
}

extension ApiContext {
  /// A refresh for a context held by one process alone: the caller (`AuthenticationInterceptor`)
  /// already
  /// runs one refresh at a time, so comparing before and after suffices.
  public func refreshCredential(
    replacing seen: StoredCredential?,
    with refresh: @Sendable (StoredCredential?) async throws -> StoredCredential
  ) async throws -> CredentialRefresh {
    guard credential == seen else { return .changed(credential) }
    let fresh: StoredCredential
    do { fresh = try await refresh(seen) } catch AuthenticationError.revoked(let reason) {
      if credential == seen { try store(credential: nil) }
      throw AuthenticationError.revoked(reason)
    }
    guard credential == seen else { return .changed(credential) }
    try store(credential: fresh)
    return .refreshed(fresh)
  }

  /// The talk's plain token for the current origin, when that is the credential kept.
  public var token: AuthToken? {
    guard let credential, credential.authenticator == PlainTokenAuthenticator.name else {
      return nil
    }
    return try? credential.decode(AuthToken.self)
  }

  /// Keeps `token` as the current origin's plain token (`PlainTokenAuthenticator`'s credential).
  public func store(token: AuthToken?) throws {
    try store(credential: token.flatMap { try? StoredCredential(PlainTokenAuthenticator.name, $0) })
  }
}

/// A credential as the context keeps it: the name of the authenticator that issued it and its
/// value as JSON. Its description never shows the value.
public struct StoredCredential: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The authenticator that issued it, by the name it is registered under (`oauth2`).
  public let authenticator: String
  /// The credential as JSON (the authenticator's `Credential`, encoded).
  public let value: JSONValue
  /// Whom it speaks for, as the credential said (`AuthenticationCredential.identity`).
  public let identity: String?

  /// A credential `authenticator` issued, for `identity`.
  public init(authenticator: String, value: JSONValue, identity: String? = nil) {
    self.authenticator = authenticator
    self.value = value
    self.identity = identity
  }

  /// `credential`, issued by the authenticator registered as `authenticator`; its dates as
  /// ISO 8601 text.
  public init(_ authenticator: String, _ credential: some AuthenticationCredential) throws {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    self.init(
      authenticator: authenticator, value: try JSONValue(encoding: credential, with: encoder),
      identity: credential.identity)
  }

  /// The value as the credential type `type`, read as `init(_:_:)` wrote it.
  public func decode<C: AuthenticationCredential>(_ type: C.Type) throws -> C {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601
    return try value.decode(type, with: decoder)
  }

  public var description: String { "\(authenticator) credential (redacted)" }
}

/// The shared state of a context: the environment's name, and credentials by origin
/// (`https://api.example:443`).
struct ContextState: Sendable, Codable, Equatable {
  var environment: String
  var credentials: [String: StoredCredential] = [:]

  private enum CodingKeys: String, CodingKey { case environment, credentials, tokens }

  init(environment: String, credentials: [String: StoredCredential] = [:]) {
    self.environment = environment
    self.credentials = credentials
  }

  /// A file of an earlier version keeps plain tokens under `tokens`: read as plain-token
  /// credentials. Tokens saved by name before they were kept by origin cannot be proven to
  /// belong to one: they are dropped (a login issues a new one).
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    environment = try container.decode(String.self, forKey: .environment)
    var credentials =
      try container.decodeIfPresent([String: StoredCredential].self, forKey: .credentials) ?? [:]
    let tokens = try container.decodeIfPresent([String: AuthToken].self, forKey: .tokens) ?? [:]
    for (origin, token) in tokens where credentials[origin] == nil {
      credentials[origin] = try StoredCredential(PlainTokenAuthenticator.name, token)
    }
    self.credentials = credentials.filter { $0.key.contains("://") }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(environment, forKey: .environment)
    try container.encode(credentials, forKey: .credentials)
  }
}

/// A context held in memory: for tests, and for runs that should not remember anything.
public final class InMemoryApiContext: ApiContext {
  private let state: Mutex<(environment: ApiEnvironment, credentials: [String: StoredCredential])>

  /// A context in `environment`, holding `credential` for its origin.
  public init(environment: ApiEnvironment, credential: StoredCredential? = nil) {
    var credentials: [String: StoredCredential] = [:]
    if let credential { credentials[environment.origin.description] = credential }
    state = Mutex((environment, credentials))
  }

  /// A context holding the talk's plain `token` for `environment`.
  public convenience init(environment: ApiEnvironment, token: AuthToken?) {
    self.init(
      environment: environment,
      credential: token.flatMap { try? StoredCredential(PlainTokenAuthenticator.name, $0) })
  }

  /// The current environment.
  public var environment: ApiEnvironment { state.withLock { $0.environment } }

  public var credential: StoredCredential? {
    state.withLock { $0.credentials[$0.environment.origin.description] }
  }

  /// Makes `environment` the current one.
  public func use(_ environment: ApiEnvironment) { state.withLock { $0.environment = environment } }

  public func store(credential: StoredCredential?) {
    state.withLock { $0.credentials[$0.environment.origin.description] = credential }
  }

  /// Keeps `token` as the current origin's plain token; in memory, this cannot fail.
  public func store(token: AuthToken?) {
    store(credential: token.flatMap { try? StoredCredential(PlainTokenAuthenticator.name, $0) })
  }
}
