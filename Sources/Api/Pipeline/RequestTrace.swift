import Foundation
import HTTPTypes

/// How a request is written in a trace (`-v`, an OpenAPI client's `TraceMiddleware`): the one
/// line builder, so a secret is redacted the same way wherever a request is shown.
///
/// A trace must show what was sent: only the values known to be secret are redacted — the
/// headers and query items the authenticator and the adapters declare, the standard
/// credentials (`Authorization`, `Cookie`), a value that starts with an auth scheme
/// (`Bearer …`), a header or query item named like a credential (`…token…`, `…secret…`,
/// `api_key`), and a URL's user info and fragment. `Idempotency-Key: 6F1…` and `?page=2` are
/// shown as they were sent.
///
/// `GET http://127.0.0.1:8080/api/books/1?api_key=REDACTED [Accept: application/json,
/// Authorization: <redacted>] → 200 in 3 ms`
public struct RequestTrace: Sendable {
  /// Header names whose values are never shown, lower-cased.
  public var secretHeaders: Set<String>
  /// Query item names whose values are never shown.
  public var secretQueryItems: Set<String>

  /// Redacts `secretHeaders` and `secretQueryItems` beside the standard credentials.
  public init(secretHeaders: Set<String> = [], secretQueryItems: Set<String> = []) {
    self.secretHeaders = Set(secretHeaders.map { $0.lowercased() })
    self.secretQueryItems = secretQueryItems
  }

  /// `request` as one line: method, URL (its secrets redacted), headers sorted by name (secret
  /// values redacted), then `result`, the time and `then`.
  public func line(
    _ request: HTTPRequest, target: String? = nil, result: String, milliseconds: Int,
    then next: String = ""
  ) -> String {
    let headers = request.headerFields.map { ($0.name.rawName, $0.value) }.sorted { $0.0 < $1.0 }
      .map { name, value in
        "\(name): \(isSecret(header: name, value: value) ? "<redacted>" : value)"
      }
    return
      "\(request.method) \(url(target ?? request.target ?? "?")) [\(headers.joined(separator: ", "))]"
      + " → \(result) in \(milliseconds) ms\(next)"
  }

  /// `text` with its user info, fragment and secret query values redacted.
  public func url(_ text: String) -> String {
    Redaction.url(text) { isSecret(queryItem: $0) }
  }

  /// Whether a header's value is not to be shown.
  public func isSecret(header name: String, value: String) -> Bool {
    let lowered = name.lowercased()
    if secretHeaders.contains(lowered) || Self.credentialHeaders.contains(lowered) { return true }
    if Self.credentialWords.contains(where: lowered.contains) { return true }
    let scheme = value.split(separator: " ").first?.lowercased() ?? ""
    return ["bearer", "basic", "digest", "token"].contains(scheme)
  }

  /// Whether a query item's value is not to be shown.
  public func isSecret(queryItem name: String) -> Bool {
    let lowered = name.lowercased()
    return secretQueryItems.contains(name) || lowered == "key" || lowered.hasSuffix("_key")
      || lowered.hasSuffix("-key") || lowered == "apikey"
      || Self.credentialWords.contains(where: lowered.contains)
  }

  /// Headers that carry a credential whatever their value.
  static let credentialHeaders: Set<String> = [
    "authorization", "proxy-authorization", "cookie", "set-cookie",
  ]

  /// Words in a name that say it holds a credential (`X-Auth-Token`, `client_secret`); `key`
  /// alone is not one of them in a header, or `Idempotency-Key` would be hidden.
  static let credentialWords = [
    "auth", "token", "secret", "password", "session", "apikey", "api-key", "api_key", "signature",
  ]
}
