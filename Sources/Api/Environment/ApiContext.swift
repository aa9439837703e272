import Domain
import Foundation
import Synchronization

/// What every api service shares: the current environment and the token for it. Changing the
/// environment takes effect on the next request of every service, with no re-resolving.
public protocol ApiContext: AnyObject, Sendable {
  var environment: ApiEnvironment { get }
  /// The token for the current environment; tokens never follow a switch to another one.
  var token: AuthToken? { get }
  func use(_ environment: ApiEnvironment) throws
  func store(token: AuthToken?) throws
}

/// The shared state of a context, kept by environment name.
struct ContextState: Sendable, Codable, Equatable {
  var environment: String
  var tokens: [String: AuthToken] = [:]
}

/// A context held in memory: for tests, and for runs that should not remember anything.
public final class InMemoryApiContext: ApiContext {
  private let state: Mutex<(environment: ApiEnvironment, tokens: [String: AuthToken])>

  public init(environment: ApiEnvironment, token: AuthToken? = nil) {
    var tokens: [String: AuthToken] = [:]
    if let token { tokens[environment.name] = token }
    state = Mutex((environment, tokens))
  }

  public var environment: ApiEnvironment { state.withLock { $0.environment } }

  public var token: AuthToken? { state.withLock { $0.tokens[$0.environment.name] } }

  public func use(_ environment: ApiEnvironment) { state.withLock { $0.environment = environment } }

  public func store(token: AuthToken?) {
    state.withLock { $0.tokens[$0.environment.name] = token }
  }
}
