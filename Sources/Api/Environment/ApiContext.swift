import Domain
import Foundation
import Synchronization

/// What every api service shares: the current environment and the token for it. Changing the
/// environment takes effect on the next request of every service, with no re-resolving.
public protocol ApiContext: AnyObject, Sendable {
  var environment: ApiEnvironment { get }
  /// The token for the current environment's origin (scheme, host, port): a token belongs to
  /// the origin it was issued for, never to a name, so it follows neither a switch to another
  /// environment nor a base URL pointed elsewhere.
  var token: AuthToken? { get }
  func use(_ environment: ApiEnvironment) throws
  func store(token: AuthToken?) throws
}

/// The shared state of a context: the environment's name, and tokens by origin
/// (`https://api.example:443`).
struct ContextState: Sendable, Codable, Equatable {
  var environment: String
  var tokens: [String: AuthToken] = [:]

  /// Tokens saved by name before they were kept by origin cannot be proven to belong to one:
  /// they are dropped (a login issues a new one).
  var tokensByOrigin: [String: AuthToken] { tokens.filter { $0.key.contains("://") } }
}

/// A context held in memory: for tests, and for runs that should not remember anything.
public final class InMemoryApiContext: ApiContext {
  private let state: Mutex<(environment: ApiEnvironment, tokens: [String: AuthToken])>

  public init(environment: ApiEnvironment, token: AuthToken? = nil) {
    var tokens: [String: AuthToken] = [:]
    if let token { tokens[environment.origin.description] = token }
    state = Mutex((environment, tokens))
  }

  public var environment: ApiEnvironment { state.withLock { $0.environment } }

  public var token: AuthToken? {
    state.withLock { $0.tokens[$0.environment.origin.description] }
  }

  public func use(_ environment: ApiEnvironment) { state.withLock { $0.environment = environment } }

  public func store(token: AuthToken?) {
    state.withLock { $0.tokens[$0.environment.origin.description] = token }
  }
}
