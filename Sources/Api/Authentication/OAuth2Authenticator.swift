import Domain
import Foundation
import HTTPTypes

/// OAuth 2.0 (RFC 6749) against the environment's token endpoint: the resource owner password
/// grant (4.3, `auth login --username U`) or client credentials (4.4, no login), a bearer token
/// (RFC 6750) on every request, and refresh with the `refresh_token` grant (6), keeping a
/// rotated refresh token when the server sends one. An `invalid_grant` answer to a refresh
/// drops the credential: the user logs in again. Config:
/// `oauth2(tokenURL: oauth/token, grant: password, clientId: ID, scope: S, clientAuth: form)`,
/// with the client secret in `environments.<name>.clientSecret`.
public struct OAuth2Authenticator: Authenticator {
  /// How a token is obtained (RFC 6749 4.3, 4.4).
  public enum Grant: String, Sendable, CaseIterable {
    /// The user's name and password (`password`), or the client's own credentials
    /// (`clientCredentials`).
    case password, clientCredentials
  }

  /// How the client authenticates to the token endpoint (2.3.1): in the form body, or as HTTP
  /// Basic.
  public enum ClientAuthentication: String, Sendable, CaseIterable {
    /// In the form body (`form`), or as HTTP Basic (`basic`).
    case form, basic
  }

  /// An access token and what came with it. Its description never shows a token.
  public struct Token: AuthenticationCredential, CustomStringConvertible {
    /// The token sent with each request.
    public let accessToken: String
    /// Its type, written before it (`Bearer`).
    public let tokenType: String
    /// What gets the next access token without a login; nil when none was given.
    public let refreshToken: String?
    public let issuedAt: Date?
    public let expiresAt: Date?
    /// The scope granted.
    public let scope: String?
    /// The user of the password grant; kept across refreshes.
    public var identity: String?

    public var description: String {
      "\(tokenType) token (redacted)\(refreshToken == nil ? "" : " with a refresh token")"
    }
  }

  /// The token endpoint: a path below the environment's base URL (`oauth/token`) or an absolute
  /// URL on its origin.
  public let tokenURL: String
  /// How tokens are obtained.
  public let grant: Grant
  /// The client's id.
  public let clientId: String?
  /// The client's secret (`environments.<name>.clientSecret`).
  public let clientSecret: String?
  /// The scope asked for.
  public let scope: String?
  /// How the client authenticates to the token endpoint.
  public let clientAuthentication: ClientAuthentication

  /// An authenticator of these values.
  public init(
    tokenURL: String = "oauth/token", grant: Grant, clientId: String? = nil,
    clientSecret: String? = nil, scope: String? = nil,
    clientAuthentication: ClientAuthentication = .form
  ) {
    self.tokenURL = tokenURL
    self.grant = grant
    self.clientId = clientId
    self.clientSecret = clientSecret
    self.scope = scope
    self.clientAuthentication = clientAuthentication
  }

  public var kind: String {
    switch grant {
    case .password: "OAuth 2.0 (password grant)"
    case .clientCredentials: "OAuth 2.0 (client credentials)"
    }
  }

  public func apply(_ credential: Token, to request: inout HTTPRequest) {
    // RFC 6750 names the scheme Bearer; servers answer `bearer` as often.
    let scheme = credential.tokenType.lowercased() == "bearer" ? "Bearer" : credential.tokenType
    request.headerFields[.authorization] = "\(scheme) \(credential.accessToken)"
  }

  public func login(_ login: Login, in context: AuthenticationContext) async throws -> Token {
    switch grant {
    case .clientCredentials:
      return try await token(["grant_type": "client_credentials"], keeping: nil, in: context)
    case .password:
      guard let username = login.username, !username.isEmpty, let password = login.password
      else {
        throw AuthenticationError.loginRequired(
          "the password grant needs a user name and a password (auth login --username NAME asks"
            + " for the password)")
      }
      var issued = try await token(
        ["grant_type": "password", "username": username, "password": password], keeping: nil,
        in: context)
      issued.identity = username
      return issued
    }
  }

  /// The client-credentials grant needs no user: the first request gets its token first.
  public var obtainsCredentialUnattended: Bool { grant == .clientCredentials }

  public func refresh(_ current: Token?, in context: AuthenticationContext) async throws -> Token {
    if let refreshToken = current?.refreshToken {
      var refreshed = try await token(
        ["grant_type": "refresh_token", "refresh_token": refreshToken], keeping: refreshToken,
        in: context)
      refreshed.identity = current?.identity
      return refreshed
    }
    switch grant {
    case .clientCredentials:
      return try await token(["grant_type": "client_credentials"], keeping: nil, in: context)
    case .password:
      throw AuthenticationError.loginRequired(
        current == nil
          ? "no one is logged in to \(context.environment.name); log in first (auth login)"
          : "the access token expired and came with no refresh token; log in again")
    }
  }

  /// The longest lifetime taken from `expires_in`: a larger one (or a negative or unreadable
  /// one) is nonsense a date cannot even hold (`-1e300` would be saved as year −4712).
  static let longestLifetime: TimeInterval = 10 * 366 * 86_400

  /// What the token endpoint answers (5.1), or its error (5.2).
  private struct Answer: Decodable {
    let accessToken: String?
    let tokenType: String?
    let expiresIn: Double?
    let refreshToken: String?
    let scope: String?
    let error: String?
    let errorDescription: String?

    private enum CodingKeys: String, CodingKey {
      case accessToken, tokenType, expiresIn, refreshToken, scope, error, errorDescription
    }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      accessToken = try container.decodeIfPresent(String.self, forKey: .accessToken)
      tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
      // RFC 6749 says a number; some servers send it as text ("3600"): both are read.
      if let number = try? container.decodeIfPresent(Double.self, forKey: .expiresIn) {
        expiresIn = number
      } else {
        expiresIn = (try? container.decodeIfPresent(String.self, forKey: .expiresIn))
          .flatMap { $0.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
      }
      refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken)
      scope = try container.decodeIfPresent(String.self, forKey: .scope)
      error = try container.decodeIfPresent(String.self, forKey: .error)
      errorDescription = try container.decodeIfPresent(String.self, forKey: .errorDescription)
    }

    /// `expires_in` within reason: a negative, infinite or absurd one is taken as not said, one
    /// past ten years as ten years.
    var lifetime: TimeInterval? {
      guard let expiresIn, expiresIn.isFinite, expiresIn >= 0 else { return nil }
      return min(expiresIn, OAuth2Authenticator.longestLifetime)
    }
  }

  /// Posts `fields` (with the scope and the client's own) to the token endpoint; a refresh token
  /// the answer does not rotate is `kept`.
  private func token(
    _ fields: [String: String], keeping kept: String?, in context: AuthenticationContext
  ) async throws -> Token {
    var fields = fields
    if let scope, fields["grant_type"] != "refresh_token" { fields["scope"] = scope }
    var route = try tokenRoute(in: context.environment)
    switch clientAuthentication {
    case .form:
      if let clientId { fields["client_id"] = clientId }
      if let clientSecret { fields["client_secret"] = clientSecret }
    case .basic:
      // 2.3.1: each part form-encoded, then joined and base64-encoded.
      let pair =
        RequestBody.formEncoded(clientId ?? "") + ":"
        + RequestBody.formEncoded(clientSecret ?? "")
      route.headerFields[.authorization] = "Basic " + Data(pair.utf8).base64EncodedString()
    }
    route.body = .form(
      fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) })
    let response = try await context.client.response(for: route)
    // A token answer holds two tokens and a few fields: one far larger is refused unread.
    guard response.body.count <= 8 * ApiRequest<String>.maximumTokenBytes else {
      throw ApiError.decoding(
        route: route, field: "",
        reason: "the token answer is \(response.body.count) bytes, too large to hold a token")
    }
    let answer: Answer
    do {
      let decoder = JSONDecoder()
      decoder.keyDecodingStrategy = .convertFromSnakeCase
      answer = try decoder.decode(Answer.self, from: response.body)
    } catch {
      throw AuthenticationError.invalidAnswer(
        "\(route) answered HTTP \(response.status) with no OAuth 2.0 JSON")
    }
    // A server may echo what it was sent: every secret of the request is redacted from it.
    let secrets = [fields["password"], fields["refresh_token"], clientSecret].compactMap {
      $0.flatMap { $0.isEmpty ? nil : $0 }
    }
    let redacted = { (said: String) in
      ApiError.excerpt(
        secrets.reduce(said) { $0.replacingOccurrences(of: $1, with: Redaction.placeholder) })
    }
    // An OAuth 2.0 error comes with 400 or 401 (RFC 6749, 5.2); another status is no token
    // endpoint's answer (a 404 from a server that has none), whatever its body calls an error.
    if let error = answer.error, response.status == 400 || response.status == 401 {
      let detail = answer.errorDescription.map { " (\(redacted($0)))" } ?? ""
      if error == "invalid_grant" {
        throw fields["grant_type"] == "refresh_token"
          ? AuthenticationError.revoked("the refresh token was refused: invalid_grant\(detail)")
          : AuthenticationError.loginRequired("the token endpoint answered invalid_grant\(detail)")
      }
      throw AuthenticationError.invalidAnswer("\(route) answered \(error)\(detail)")
    }
    guard (200..<300).contains(response.status) else {
      let said = (answer.errorDescription ?? answer.error).map { " (\(redacted($0)))" } ?? ""
      throw AuthenticationError.invalidAnswer(
        "\(route) answered HTTP \(response.status)\(said) instead of a token")
    }
    guard let access = answer.accessToken, !access.isEmpty else {
      throw AuthenticationError.invalidAnswer(
        "\(route) answered HTTP \(response.status) without an access_token")
    }
    return Token(
      accessToken: try ApiRequest<String>.checkedToken(access, route: route, field: "access_token"),
      tokenType: answer.tokenType ?? "Bearer",
      refreshToken: try answer.refreshToken.map {
        try ApiRequest<String>.checkedToken($0, route: route, field: "refresh_token")
      } ?? kept,
      issuedAt: context.now,
      expiresAt: answer.lifetime.map { context.now.addingTimeInterval($0) },
      scope: answer.scope ?? scope)
  }

  /// `POST tokenURL`, form-encoded, answered in JSON: its 400 and 401 are answers to read, not
  /// failures to retry. An absolute `tokenURL` must be on the environment's origin.
  func tokenRoute(in environment: ApiEnvironment) throws -> Route {
    var path = tokenURL
    if let url = URL(string: tokenURL), url.scheme != nil {
      guard Origin(url) == environment.origin else {
        throw AuthenticationError.invalidAnswer(
          "the token URL \(Redaction.url(tokenURL)) is not on \(environment.origin), the"
            + " environment's origin; a credential is never sent elsewhere")
      }
      // A path relative to the base URL's folder that reaches the token URL's path.
      let base = environment.baseURL.path.split(separator: "/", omittingEmptySubsequences: true)
      path =
        String(repeating: "../", count: base.count)
        + url.path.drop { $0 == "/" } + (url.query.map { "?\($0)" } ?? "")
    }
    var route = Route(
      .post, path,
      isAuthentication: true)
    route.headerFields[.accept] = "application/json"
    route.acceptableStatus = 200..<500
    return route
  }
}
