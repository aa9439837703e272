import Foundation

/// An OAuth 2.0 token endpoint for the fixture server (`POST <basePath>oauth/token`, RFC 6749):
/// the password, client-credentials and refresh-token grants, form-encoded, answered in JSON.
/// The access tokens it issues are the responder's tokens: with `requireAuth`, the other routes
/// accept them as `Authorization: Bearer …` until they expire on the responder's clock.
public struct OAuthServer: Sendable {
  /// Users and their passwords, for the password grant.
  public var users: [String: String] = ["u": "pw"]
  /// The client, authenticated in the form (`client_id`, `client_secret`) or by HTTP Basic.
  public var clientId = "kernel"
  /// Required of the client when set.
  public var clientSecret: String?
  /// `expires_in` of every access token, and how long the responder accepts it.
  public var accessTokenLifetime: Duration = .seconds(3600)
  /// Whether a refresh hands out a new refresh token (the old one is then refused).
  public var rotatesRefreshTokens = true
  /// Whether the client-credentials grant is allowed.
  public var allowsClientCredentials = true

  /// The defaults above: hour-long access tokens, rotating refresh tokens, client credentials
  /// allowed.
  public init() {}

  /// The path below the base path it answers at.
  public static let path = "oauth/token"

  /// The fields of a form-encoded body (`a=1&b=x+y`), decoded.
  static func form(_ body: Data) -> [String: String] {
    var fields: [String: String] = [:]
    for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let decode = { (text: Substring) in
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
      }
      fields[decode(parts[0])] = parts.count > 1 ? decode(parts[1]) : ""
    }
    return fields
  }

  /// The client id and secret a request authenticates with: HTTP Basic, else the form's.
  static func client(_ request: SampleRequest, form: [String: String]) -> (String?, String?) {
    if let header = request.headers["authorization"], header.hasPrefix("Basic "),
      let data = Data(base64Encoded: String(header.dropFirst(6))),
      let pair = String(data: data, encoding: .utf8), let colon = pair.firstIndex(of: ":")
    {
      let decode = { (text: Substring) in
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text)
      }
      return (decode(pair[..<colon]), decode(pair[pair.index(after: colon)...]))
    }
    return (form["client_id"], form["client_secret"])
  }

  /// An RFC 6749 5.2 error answer.
  static func error(_ status: Int, _ code: String, _ description: String) -> SampleResponse {
    let body = try? JSONSerialization.data(
      withJSONObject: ["error": code, "error_description": description], options: [.sortedKeys])
    return SampleResponse(
      status: status, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"],
      body: body ?? Data())
  }
}
