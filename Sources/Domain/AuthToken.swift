/// A bearer token. Its description never shows the secret, so it cannot leak into a log line
/// or an error message by interpolation; read `secret` only to put it on a request.
public struct AuthToken: Sendable, Hashable, Codable, CustomStringConvertible {
  /// The token itself, sent in the environment's token header; never printed.
  public let secret: String

  /// A token whose value is `secret`.
  public init(_ secret: String) { self.secret = secret }

  /// The header a token travels in unless an environment names another.
  public static let defaultHeader = "Authorization"
  /// Written before the token unless an environment says otherwise (`Bearer <token>`).
  public static let defaultScheme = "Bearer"

  public var description: String { "token(redacted, \(secret.count) characters)" }
}
