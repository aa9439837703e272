import Domain
import Foundation
import HTTPTypes

/// An API key from the config (`environments.<name>.apiKey`, a secret), sent in a header or a
/// query item of every request to the environment's origin. It needs no login and is never
/// fetched: a refused key is the api's answer. Config: `apiKey(header: X-Api-Key)` or
/// `apiKey(query: api_key)`.
public struct ApiKeyAuthenticator: Authenticator {
  /// Where the key goes.
  public enum Placement: Sendable, Hashable {
    /// In the header of this name.
    case header(String)
    /// In the query item of this name.
    case query(String)
  }

  /// The key as a credential; its description never shows it.
  public struct Key: AuthenticationCredential, CustomStringConvertible {
    /// The key itself.
    public let key: String
    public var description: String { "API key (redacted)" }
  }

  /// Where the key goes.
  public let placement: Placement
  /// The key, as configured; nil or empty: none is configured.
  public let key: String?
  /// The setting a missing key is set with, for the sentence that says so.
  public let setting: String

  /// Sends `key` at `placement`; a missing key is said as `setting` to set.
  public init(_ placement: Placement, key: String?, setting: String = "apiKey") {
    self.placement = placement
    self.key = key
    self.setting = setting
  }

  public var kind: String {
    switch placement {
    case .header(let name): "API key in the \(name) header"
    case .query(let name): "API key in the \(name) query item"
    }
  }

  public var secretHeaders: Set<String> {
    if case .header(let name) = placement { return [name.lowercased()] }
    return []
  }

  public var secretQueryItems: Set<String> {
    if case .query(let name) = placement { return [name] }
    return []
  }

  public func standingCredential(for environment: ApiEnvironment) -> Key? {
    guard let key, !key.isEmpty else { return nil }
    return Key(key: key)
  }

  public func apply(_ credential: Key, to request: inout HTTPRequest) {
    switch placement {
    case .header(let name): request.set(name, credential.key)
    case .query(let name):
      let item = Route.queryEncoded(name) + "=" + Route.queryEncoded(credential.key)
      let path = request.path ?? "/"
      request.path = path + (path.contains("?") ? "&" : "?") + item
    }
  }

  public func isRequest(_ request: HTTPRequest, authenticatedWith credential: Key) -> Bool {
    switch placement {
    case .header(let name): request.value(of: name) == credential.key
    case .query(let name):
      (request.path ?? "").contains(
        Route.queryEncoded(name) + "=" + Route.queryEncoded(credential.key))
    }
  }

  public func refresh(_ current: Key?, in context: AuthenticationContext) async throws -> Key {
    try configuredCredential(replacing: current, in: context, setting: setting)
  }
}
