import Domain
import Foundation

/// Gets a token with the environment's authentication request and stores it in the api
/// context, where every request to the environment picks it up.
public struct ApiAuthService: AuthService {
  public let client: ApiClient
  /// The request that answers a token: `GET auth` as plain text unless told otherwise.
  public let request: ApiRequest<String>

  public init(client: ApiClient, request: ApiRequest<String> = .token()) {
    self.client = client
    self.request = request
  }

  /// A token at a key path of the `auth` route's JSON body (`"info.token"`).
  public init(client: ApiClient, tokenMapping: JSONMapping?) {
    self.init(client: client, request: .token(mapping: tokenMapping))
  }

  @discardableResult
  public func authorize() async throws -> AuthToken {
    let authToken = AuthToken(try await client.send(request))
    try client.context.store(token: authToken)
    return authToken
  }
}
