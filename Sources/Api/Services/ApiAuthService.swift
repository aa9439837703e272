import Domain
import Foundation

/// Gets a token from the `auth` route and stores it in the api context, where every request
/// to the environment picks it up.
public struct ApiAuthService: AuthService {
  public let client: ApiClient
  /// Where the token is in a JSON body (`"info.token"`); nil when the body is the plain token.
  public let tokenMapping: JSONMapping?

  public init(client: ApiClient, tokenMapping: JSONMapping? = nil) {
    self.client = client
    self.tokenMapping = tokenMapping
  }

  @discardableResult
  public func authorize() async throws -> AuthToken {
    let token: String
    if let tokenMapping {
      token = try await client.value(String.self, for: .auth, mapping: tokenMapping)
    } else {
      let body = try await client.response(for: .auth).body
      guard let text = String(data: body, encoding: .utf8) else {
        throw ApiError.decoding(route: .auth, field: "", reason: "the token is not UTF-8 text")
      }
      token = text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    guard !token.isEmpty, !token.contains(where: { $0.isWhitespace || $0.isNewline }) else {
      throw ApiError.decoding(
        route: .auth, field: "", reason: "the token is empty or contains spaces")
    }
    let authToken = AuthToken(token)
    try client.context.store(token: authToken)
    return authToken
  }
}
