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
    catalog.authenticator("none") { _ in { _, _ in nil } }
    catalog.authenticator("plainToken", usage: "plainToken(route: <path>, keyPath: <path>)") { p in
      let route = p.value("route", at: 0) ?? "auth"
      let keyPath = p.value("keyPath", at: 1)
      return { _, environment in
        PlainTokenAuthenticator(
          request: .token(
            Route(.get, route, isAuthentication: true),
            mapping: keyPath.map { JSONMapping(keyPath: $0) }),
          header: environment.tokenHeader, scheme: environment.tokenScheme)
      }
    }
    catalog.authenticator(
      "oauth2",
      usage:
        "oauth2(tokenURL: <url>, grant: password|clientCredentials, clientId: <id>, scope: <scope>, clientAuth: form|basic)"
    ) { p in
      let tokenURL = p.value("tokenURL") ?? "oauth/token"
      let grant = try p.oneOf("grant", OAuth2Authenticator.Grant.self, default: .password)
      let clientId = p.value("clientId")
      let scope = p.value("scope")
      let clientAuth = try p.oneOf(
        "clientAuth", OAuth2Authenticator.ClientAuthentication.self, default: .form)
      return { _, environment in
        // HTTP Basic client authentication sends the secret in every token request: without
        // one, the request would go out and be refused as invalid_client.
        if clientAuth == .basic, (environment.values["clientSecret"] ?? "").isEmpty {
          throw ConfigError.unusable(
            file: p.file, key: p.key,
            reason:
              "oauth2(clientAuth: basic) needs the client's secret, and none is set; set"
              + " environments.\(environment.name).clientSecret or"
              + " \(p.variable(["environments", environment.name, "clientSecret"]))")
        }
        return OAuth2Authenticator(
          tokenURL: tokenURL, grant: grant, clientId: clientId,
          clientSecret: environment.values["clientSecret"], scope: scope,
          clientAuthentication: clientAuth)
      }
    }
    catalog.authenticator("apiKey", usage: "apiKey(header: <name>) or apiKey(query: <name>)") {
      p in
      let placement: ApiKeyAuthenticator.Placement
      if let query = p.value("query") {
        placement = .query(query)
      } else {
        placement = .header(p.value("header", at: 0) ?? "X-Api-Key")
      }
      return { _, environment in
        ApiKeyAuthenticator(placement, key: environment.values["apiKey"])
      }
    }
    catalog.authenticator("basic", sendsBaseURLCredentials: true) { _ in
      { _, _ in BasicAuthenticator() }
    }
  }
}
