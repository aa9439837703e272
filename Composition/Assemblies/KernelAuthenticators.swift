import Api
import Domain
import Foundation

extension KernelAssembly {
  /// Kernel's authenticators, registered as an app registers its own. `environments.<name>.auth`
  /// names one:
  ///
  /// - `none`: no credential; a 401 is the api's answer.
  /// - `plainToken(route: auth, keyPath: info.token)`: the talk's token from a GET, as text or at
  ///   a key path, in the environment's `tokenHeader` and `tokenScheme`.
  /// - `oauth2(tokenURL: oauth/token, grant: password|clientCredentials, clientId: ID, scope: S,
  ///   clientAuth: form|basic)`: the secret in `environments.<name>.clientSecret`.
  /// - `apiKey(header: X-Api-Key)` or `apiKey(query: api_key)`: the key in
  ///   `environments.<name>.apiKey`.
  /// - `basic`: the user and password in the base URL, or `username` and `password`.
  static func authenticators(into catalog: inout Catalog) {
    catalog.authenticator("none") { _, _ in nil }
    catalog.authenticator(
      "plainToken", usage: "plainToken(route: <path>, keyPath: <path>)",
      parameters: { ($0.value("route", at: 0) ?? "auth", $0.value("keyPath", at: 1)) },
      build: { token, _, environment in
        PlainTokenAuthenticator(
          request: .token(
            Route(.get, token.0, isAuthentication: true),
            mapping: token.1.map { JSONMapping(keyPath: $0) }),
          header: environment.tokenHeader, scheme: environment.tokenScheme)
      })
    catalog.authenticator(
      "oauth2",
      usage:
        "oauth2(tokenURL: <url>, grant: password|clientCredentials, clientId: <id>, scope: <scope>, clientAuth: form|basic)",
      parameters: OAuth2Entry.init
    ) { entry, _, environment in
      // HTTP Basic client authentication sends the secret in every token request: without
      // one, the request would go out and be refused as invalid_client.
      if entry.clientAuth == .basic, (environment.values["clientSecret"] ?? "").isEmpty {
        let p = entry.parameters
        throw ConfigError.unusable(
          file: p.file, key: p.key,
          reason:
            "oauth2(clientAuth: basic) needs the client's secret, and none is set; set"
            + " environments.\(environment.name).clientSecret or"
            + " \(p.variable(["environments", environment.name, "clientSecret"]))")
      }
      return OAuth2Authenticator(
        tokenURL: entry.tokenURL, grant: entry.grant, clientId: entry.clientId,
        clientSecret: environment.values["clientSecret"], scope: entry.scope,
        clientAuthentication: entry.clientAuth)
    }
    catalog.authenticator(
      "apiKey", usage: "apiKey(header: <name>) or apiKey(query: <name>)",
      parameters: { p -> ApiKeyAuthenticator.Placement in
        p.value("query").map { .query($0) } ?? .header(p.value("header", at: 0) ?? "X-Api-Key")
      },
      build: { placement, _, environment in
        ApiKeyAuthenticator(placement, key: environment.values["apiKey"])
      })
    catalog.authenticator("basic", sendsBaseURLCredentials: true) { _, _ in BasicAuthenticator() }
  }

  /// What an `oauth2(…)` entry says, read when the config is composed.
  private struct OAuth2Entry: Sendable {
    let parameters: Parameters
    let tokenURL: String
    let grant: OAuth2Authenticator.Grant
    let clientId: String?
    let scope: String?
    let clientAuth: OAuth2Authenticator.ClientAuthentication

    init(_ p: Parameters) throws {
      parameters = p
      tokenURL = p.value("tokenURL") ?? "oauth/token"
      grant = try p.oneOf("grant", OAuth2Authenticator.Grant.self, default: .password)
      clientId = p.value("clientId")
      scope = p.value("scope")
      clientAuth = try p.oneOf(
        "clientAuth", OAuth2Authenticator.ClientAuthentication.self, default: .form)
    }
  }
}
