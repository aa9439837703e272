import Domain
import Foundation
import HTTPTypes

/// HTTP Basic: a user and password from the environment's base URL
/// (`https://user:password@host/api/`) or its `username` and `password` settings, sent only to
/// its origin. It needs no login and is never fetched: a refused password is the api's answer.
/// Config: `basic`.
public struct BasicAuthenticator: Authenticator {
  /// The `Authorization` value; its description never shows it.
  public struct Credential: AuthenticationCredential, CustomStringConvertible {
    /// `Basic <base64 of user:password>`.
    public let authorization: String
    /// The user name.
    public var identity: String?
    public var description: String { "Basic credentials (redacted)" }
  }

  /// Basic authentication from the environment's base URL credentials or `username` and `password`.
  public init() {}

  public var kind: String { "HTTP Basic user and password" }

  public func standingCredential(for environment: ApiEnvironment) -> Credential? {
    if let user = environment.values["username"], !user.isEmpty {
      let pair = "\(user):\(environment.values["password"] ?? "")"
      return Credential(
        authorization: "Basic " + Data(pair.utf8).base64EncodedString(), identity: user)
    }
    return HTTPRequest.basicAuthorization(in: environment.baseURL).map {
      Credential(
        authorization: $0,
        identity: URLComponents(url: environment.baseURL, resolvingAgainstBaseURL: false)?.user)
    }
  }

  public func apply(_ credential: Credential, to request: inout HTTPRequest) {
    request.headerFields[.authorization] = credential.authorization
  }

  public func refresh(_ current: Credential?, in context: AuthenticationContext) async throws
    -> Credential
  {
    try configuredCredential(replacing: current, in: context, setting: "username")
  }
}
