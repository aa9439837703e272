import Domain
import Foundation

/// A named place the API lives: its base URL and how a token travels to it.
///
/// An environment over plain `http://` to a host other than loopback is refused unless it is
/// marked `allowsInsecureHTTP`: tokens would cross the network in the clear.
public struct ApiEnvironment: Sendable, Hashable, Codable, CustomStringConvertible {
  /// Its name in the config (`staging`).
  public let name: String
  /// Always ends with `/`, so routes resolve beneath it.
  public let baseURL: URL
  /// The header the token goes in: `Authorization`, or e.g. the talk's `AUTH_TOKEN`.
  public let tokenHeader: String
  /// Written before the token (`Bearer`), or nil to send the bare token.
  public let tokenScheme: String?
  /// Whether plain `http` to a host other than loopback is allowed.
  public let allowsInsecureHTTP: Bool
  /// The app's own keys for this environment (`environments.staging.apiKey`), by name: what
  /// an adapter reads from `attempt.context.environment` when it adapts a request.
  public let values: [String: String]
  /// The origin (scheme, host, port) requests to this environment go to.
  public let origin: Origin

  private enum CodingKeys: String, CodingKey {
    case name, baseURL, tokenHeader, tokenScheme, allowsInsecureHTTP, values
  }

  /// An environment of these values; throws `ApiError` for a base URL that cannot be used.
  public init(
    name: String, baseURL: URL, tokenHeader: String = AuthToken.defaultHeader,
    tokenScheme: String? = AuthToken.defaultScheme,
    allowsInsecureHTTP: Bool = false, values: [String: String] = [:]
  ) throws {
    guard let scheme = baseURL.scheme?.lowercased(), scheme == "http" || scheme == "https",
      let host = baseURL.host, !host.isEmpty
    else {
      throw ApiError.invalidEnvironment(
        name: name,
        reason: "\(Redaction.url(baseURL.absoluteString)) is not an http(s) URL with a host")
    }
    if baseURL.query != nil || baseURL.fragment != nil {
      throw ApiError.invalidEnvironment(
        name: name,
        reason:
          "\(Redaction.url(baseURL.absoluteString)) has a query or fragment; a base URL is a"
          + " scheme, host and path, and a route's query belongs to the route")
    }
    if let port = baseURL.port, !(1...65535).contains(port) {
      throw ApiError.invalidEnvironment(
        name: name,
        reason: "\(Redaction.url(baseURL.absoluteString)) has port \(port); a port is 1 to 65535")
    }
    if scheme == "http" && !allowsInsecureHTTP && !Loopback.isLoopback(host) {
      throw ApiError.insecureEnvironment(name: name, url: Redaction.url(baseURL.absoluteString))
    }
    guard !tokenHeader.isEmpty, tokenHeader.allSatisfy(Self.isTokenCharacter) else {
      throw ApiError.invalidEnvironment(
        name: name, reason: "\"\(tokenHeader)\" is not a valid header name")
    }
    let text = baseURL.absoluteString
    self.init(
      checked: name, baseURL: text.hasSuffix("/") ? baseURL : URL(string: text + "/") ?? baseURL,
      tokenHeader: tokenHeader, tokenScheme: tokenScheme, allowsInsecureHTTP: allowsInsecureHTTP,
      values: values)
  }

  /// Stores values already checked.
  private init(
    checked name: String, baseURL: URL, tokenHeader: String, tokenScheme: String?,
    allowsInsecureHTTP: Bool, values: [String: String] = [:]
  ) {
    self.name = name
    self.baseURL = baseURL
    self.tokenHeader = tokenHeader
    self.tokenScheme = tokenScheme
    self.allowsInsecureHTTP = allowsInsecureHTTP
    self.values = values
    origin = Origin(baseURL)
  }

  /// Same as `init(name:baseURL:...)` from text, naming the environment when the URL is bad.
  public init(
    name: String, baseURL text: String, tokenHeader: String = AuthToken.defaultHeader,
    tokenScheme: String? = AuthToken.defaultScheme,
    allowsInsecureHTTP: Bool = false, values: [String: String] = [:]
  ) throws {
    guard let url = URL(string: text) else {
      throw ApiError.invalidEnvironment(
        name: name, reason: "\"\(Redaction.url(text))\" is not a URL")
    }
    try self.init(
      name: name, baseURL: url, tokenHeader: tokenHeader, tokenScheme: tokenScheme,
      allowsInsecureHTTP: allowsInsecureHTTP, values: values)
  }

  /// The bundled API, answered in process. Its host is under `.invalid`, a name that never
  /// resolves, so a request that escaped to the network would fail instead of leaking.
  public static let sample = ApiEnvironment(
    checked: "sample",
    baseURL: URL(string: "https://sample.kernel.invalid/api/") ?? URL(fileURLWithPath: "/"),
    tokenHeader: AuthToken.defaultHeader, tokenScheme: AuthToken.defaultScheme,
    allowsInsecureHTTP: false)

  /// What this environment's stored answers are kept under: its origin and base path
  /// (`http://127.0.0.1:8080/api/`), so two environments on one origin with different base
  /// paths (`/api/`, `/v2/`) never share answers, and a `cache clear` of one leaves the other's.
  public var storeRoot: String {
    var path =
      URLComponents(url: baseURL, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? "/"
    if !path.hasSuffix("/") { path += "/" }
    if !path.hasPrefix("/") { path = "/" + path }
    return origin.description + path
  }

  /// Whether `request` goes to this environment's origin.
  public func isOrigin(of request: HTTPRequest) -> Bool { request.origin == origin }

  /// The name and the base URL with its user, password and query values redacted: what logs,
  /// errors and listings show.
  public var description: String { "\(name) (\(Redaction.url(baseURL.absoluteString)))" }

  /// The base URL as it may be shown: user, password and query values redacted.
  public var displayURL: String { Redaction.url(baseURL.absoluteString) }

  // Decoding validates like the initializer: a saved environment is input like any other.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    try self.init(
      name: try container.decode(String.self, forKey: .name),
      baseURL: try container.decode(URL.self, forKey: .baseURL),
      tokenHeader: try container.decodeIfPresent(String.self, forKey: .tokenHeader)
        ?? AuthToken.defaultHeader,
      tokenScheme: try container.decodeIfPresent(String.self, forKey: .tokenScheme),
      allowsInsecureHTTP: try container.decodeIfPresent(Bool.self, forKey: .allowsInsecureHTTP)
        ?? false,
      values: try container.decodeIfPresent([String: String].self, forKey: .values) ?? [:])
  }

  private static func isTokenCharacter(_ character: Character) -> Bool {
    character.isASCII
      && (character.isLetter || character.isNumber || "!#$%&'*+-.^_`|~".contains(character))
  }
}

/// Scheme, host and port: requests to the same origin may carry the environment's token.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
  /// `http` or `https`, lower-cased.
  public let scheme: String
  /// The host, lower-cased.
  public let host: String
  /// The port, the scheme's default when the URL names none.
  public let port: Int

  /// The origin of `url`, read as a request to it carries it (scheme and authority).
  public init(_ url: URL) {
    let request = HTTPRequest(.get, url)
    self.init(scheme: request.scheme ?? "", authority: request.authority ?? "")
  }

  /// The origin of an authority (`host`, `host:port`, `[::1]:8080`) under `scheme`, as a URL
  /// with that authority has it.
  public init(scheme: String, authority: String) {
    self.scheme = scheme.lowercased()
    var hostPart = Substring(authority)
    var port: Int?
    if let colon = authority.lastIndex(of: ":"), !authority[colon...].utf8.contains(0x5D) {
      hostPart = authority[..<colon]
      port = Int(authority[authority.index(after: colon)...])
    }
    if hostPart.hasPrefix("["), hostPart.hasSuffix("]") {
      hostPart = hostPart.dropFirst().dropLast()
    }
    host = hostPart.lowercased()
    self.port = port ?? (self.scheme == "https" ? 443 : self.scheme == "http" ? 80 : -1)
  }

  public var description: String { "\(scheme)://\(host):\(port)" }
}
