import Api
import Foundation
import Injection

/// The api side as `auth` and `env` commands see it: the current environment, its token, the
/// environments to switch to.
package struct ApiAccess: Sendable {
  let container: Container
  let all: [ApiEnvironment]
  /// Whether the token and the chosen environment are saved in the data dir for later runs.
  public let contextPersists: Bool

  private var context: any ApiContext {
    get throws { try container.resolve((any ApiContext).self) }
  }

  /// The environment in use: its name and base URL, as shown to people (a password redacted).
  public var current: (name: String, baseURL: String) {
    get throws {
      let environment = try context.environment
      return (environment.name, environment.displayURL)
    }
  }

  /// Every environment of the config, by name, with its base URL as shown to people (a password
  /// redacted), whether its requests are answered in process rather than sent, and the origin
  /// and base path its cached answers are kept under (`http://127.0.0.1:8080/api/`,
  /// `ApiEnvironment.storeRoot`); the current one as this run has it (`--base-url` over its
  /// own).
  public let environments: [(name: String, baseURL: String, inProcess: Bool, origin: String)]

  /// How the current environment authenticates, and what is kept for it: never a secret.
  package struct Credential: Sendable {
    /// The authenticator's name in the config (`oauth2`), or `none`.
    public let authenticator: String
    /// What it is: `OAuth 2.0 (password grant)`.
    public let kind: String
    /// The origin the credential is for (`https://api.example:443`).
    public let origin: String
    /// Whether a credential is kept for the origin (from a login or a refresh).
    public let isKept: Bool
    /// Whether the config itself holds one (an API key, a password): no login is needed.
    public let isConfigured: Bool
    /// When the kept credential expires, if it says.
    public let expiresAt: Date?
    /// Whether a credential is saved for the origin that its authenticator cannot read (another
    /// version saved it, or it was changed by hand): never sent, as good as none.
    public var isUnreadable = false
  }

  /// The current environment's authentication and credential, as `auth status` shows them.
  public var credential: Credential {
    get throws {
      let client = try container.resolve(ApiClient.self)
      let environment = try context.environment
      guard let authentication = client.authentication else {
        return Credential(
          authenticator: "none", kind: "no authentication", origin: "\(environment.origin)",
          isKept: false, isConfigured: false, expiresAt: nil)
      }
      let context = try context
      let kept = authentication.credential(in: context)
      var credential = Credential(
        authenticator: authentication.name, kind: authentication.kind,
        origin: "\(environment.origin)", isKept: kept != nil,
        isConfigured: authentication.hasStandingCredential(for: environment),
        expiresAt: kept.flatMap { authentication.expiry(of: $0).expiresAt })
      credential.isUnreadable = kept == nil && authentication.hasUnreadableCredential(in: context)
      return credential
    }
  }

  /// Whether a credential is kept for the current environment (never the credential itself).
  public var isLoggedIn: Bool { get throws { try credential.isKept } }

  /// Logs in with the environment's authenticator (the password grant takes `username` and
  /// `password`) and keeps the credential; returns the environment's name.
  @discardableResult
  public func login(username: String? = nil, password: String? = nil) async throws -> String {
    let client = try container.resolve(ApiClient.self)
    try await client.login(Login(username: username, password: password))
    return try context.environment.name
  }

  /// Forgets the current environment's credential, and drops what the session built.
  public func logout() throws {
    try context.store(credential: nil)
    container.reset(.session)
  }

  /// Switches to the environment `name`, and drops what the session built for the previous
  /// one; false when the config has none of that name.
  public func use(_ name: String) throws -> Bool {
    guard let environment = all.first(where: { $0.name == name }) else { return false }
    try context.use(environment)
    container.reset(.session)
    return true
  }

  /// The api side's `Service` (`ApiClient.self`), built on first
  /// use; what the session built is made anew after `logout()` or `use(_:)`.
  public func service<Service: Sendable>(_ type: Service.Type) throws -> Service {
    try container.resolve(type)
  }
}
