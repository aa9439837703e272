import Foundation
import HTTPTypes

/// One request the api layer can make, as a value: method, path below the environment's base
/// URL, query, headers, body, and whether sending it twice is safe. Services build routes; the
/// client sends them with the context's environment, adapters and retriers, so nothing sends to
/// an address outside the environment and no route is special to the client.
///
/// ```swift
/// let route = Route.post("books", body: try .json(book, encoder: mapping.encoder()))
/// let shelf = Route.get("books", query: [URLQueryItem(name: "page", value: "2")])
/// ```
public struct Route: Sendable, Hashable, CustomStringConvertible {
  /// The HTTP method.
  public var method: HTTPRequest.Method
  /// The path below the environment's base URL, without a leading `/`.
  public var path: String
  /// The query items, in order.
  public var query: [URLQueryItem]
  /// Sent as given; adapters run after and may add or replace fields.
  public var headerFields: HTTPFields
  /// Its body, from an encoder (`RequestBody.json`, `.form`, `.multipart`, `.bytes`); its
  /// content type is sent unless `headerFields` name one.
  public var body: RequestBody?
  /// Safe to send twice: only such requests are retried by backoff. GET, HEAD, PUT, DELETE,
  /// OPTIONS and TRACE are by default; a POST with an idempotency key may say so.
  public var isIdempotent: Bool
  /// Fetches credentials: a 401 to it is final, never a reason to refresh the token.
  public var isAuthentication: Bool
  /// The statuses answered as the route's value; any other is a failure that retriers judge.
  /// 2xx unless the route says otherwise (a token endpoint reads its 400 and 401 answers).
  public var acceptableStatus: Range<Int> = 200..<300
  /// The media types an accepted answer may have (`application/json`, `application/*`);
  /// another is refused as bad data, never decoded. Nil, the default: any, since many apis
  /// serve JSON as `text/html`.
  public var acceptableContentTypes: [String]? = nil

  /// A route of these parts; `isIdempotent` defaults by method.
  public init(
    _ method: HTTPRequest.Method, _ path: String, query: [URLQueryItem] = [],
    headerFields: HTTPFields = [:], body: RequestBody? = nil, isIdempotent: Bool? = nil,
    isAuthentication: Bool = false
  ) {
    self.method = method
    self.path = String(path.drop { $0 == "/" })
    self.query = query
    self.headerFields = headerFields
    self.body = body
    self.isIdempotent =
      isIdempotent ?? [.get, .head, .put, .delete, .options, .trace].contains(method)
    self.isAuthentication = isAuthentication
  }

  /// A GET of a path below the base URL (`shows/7`); it cannot leave the environment's origin.
  public static func get(_ path: String, query: [URLQueryItem] = []) -> Route {
    Route(.get, path, query: query)
  }

  /// A POST of `body`; not retried by backoff unless it says it is idempotent (it carries an
  /// idempotency key the server honours).
  public static func post(_ path: String, body: RequestBody, isIdempotent: Bool = false) -> Route {
    Route(.post, path, body: body, isIdempotent: isIdempotent)
  }

  /// `PUT path` with `body`.
  public static func put(_ path: String, body: RequestBody) -> Route {
    Route(.put, path, body: body)
  }

  /// `PATCH path` with `body`.
  public static func patch(_ path: String, body: RequestBody) -> Route {
    Route(.patch, path, body: body)
  }

  /// `DELETE path`.
  public static func delete(_ path: String) -> Route { Route(.delete, path) }

  /// `GET auth`: a token, as plain text or at a key path (see `ApiRequest.token`).
  public static let auth = Route(.get, "auth", isAuthentication: true)

  /// The route's URL under the environment's base URL, with its query. A path that would
  /// resolve elsewhere (`//other.host/x`, `https://other.host/`) is taken literally, escaped,
  /// below the base URL.
  public func url(in environment: ApiEnvironment) -> URL {
    let base = environment.baseURL
    var url: URL
    if let resolved = URL(string: path, relativeTo: base)?.absoluteURL,
      resolved.scheme == base.scheme, resolved.host == base.host, resolved.port == base.port
    {
      url = resolved
    } else {
      let escaped =
        path.addingPercentEncoding(
          withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: ":/")))
        ?? ""
      url = URL(string: escaped, relativeTo: base)?.absoluteURL ?? base
    }
    guard !query.isEmpty, var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
    else { return url }
    let encoded = query.map { item in
      Self.queryEncoded(item.name) + (item.value.map { "=" + Self.queryEncoded($0) } ?? "")
    }
    parts.percentEncodedQuery = ([parts.percentEncodedQuery].compactMap { $0 } + encoded)
      .joined(separator: "&")
    return parts.url ?? url
  }

  /// RFC 3986's unreserved characters and the few of a query component no server splits on;
  /// everything else, `+`, `&`, `=` and `;` included, is percent-encoded, so a value arrives
  /// as the route wrote it (`q=a+b` is `q=a%2Bb`, never read as `a b`).
  private static let queryAllowed = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?:@")

  static func queryEncoded(_ text: String) -> String {
    text.addingPercentEncoding(withAllowedCharacters: queryAllowed) ?? ""
  }

  /// The request for this route in `environment`, without its body: method, the URL
  /// `url(in:)` gives, the route's header fields, and its body's content type unless they name
  /// one (a user and password in the base URL go only as the `basic` authenticator's
  /// credential).
  public func request(in environment: ApiEnvironment) -> HTTPRequest {
    var fields = headerFields
    if fields[.contentType] == nil, let type = body?.contentType { fields[.contentType] = type }
    return HTTPRequest(method, url(in: environment), headerFields: fields)
  }

  /// Whether `contentType` (a `Content-Type` value, parameters and all) is one this route
  /// accepts: by media type, case-insensitively, parameters ignored on both sides
  /// (`application/json; charset=utf-8` is `application/json`), `*` matching any type or
  /// subtype (`type/*`, `*/json`, `*/*`).
  public func accepts(contentType: String?) -> Bool {
    guard let acceptable = acceptableContentTypes else { return true }
    let media = Self.mediaType(contentType ?? "")
    return acceptable.contains { written in
      let pattern = Self.mediaType(written)
      return Self.matches(pattern.type, media.type) && Self.matches(pattern.subtype, media.subtype)
    }
  }

  /// A media type's type and subtype, lower-cased, without its parameters.
  static func mediaType(_ text: String) -> (type: Substring, subtype: Substring) {
    let bare = text.split(separator: ";", maxSplits: 1).first ?? ""
    let parts = bare.lowercased().split(separator: "/", maxSplits: 1)
    let trim = { (part: Substring?) -> Substring in
      Substring((part ?? "").trimmingCharacters(in: .whitespaces))
    }
    return (trim(parts.first), trim(parts.count > 1 ? parts[1] : nil))
  }

  private static func matches(_ pattern: Substring, _ value: Substring) -> Bool {
    pattern == "*" || (!value.isEmpty && pattern == value)
  }

  /// `GET books/shelf/2`: how errors and logs name a request; `GET the base URL` for the
  /// environment's base URL itself (an empty path).
  public var description: String { "\(method) \(path.isEmpty ? "the base URL" : path)" }
}
