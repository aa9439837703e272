import Domain
import Foundation
import HTTPTypes

/// Sends one HTTP request and returns what came back, whatever the status: judging the status
/// is validation's job, and following a redirect is the client's (see `Redirects`), so a
/// transport answers a 3xx as it is. Cancelling the calling task cancels the request.
///
/// The request is a swift-http-types `HTTPRequest` (method, scheme, authority, path and query,
/// header fields) and its body; the platform's transport converts at its edge: `CurlTransport`
/// on Linux, `URLSessionTransport` on Apple platforms.
public protocol Transport: Sendable {
  /// Sends `request` with `body` (read from its first byte: a retry or a redirect sends it
  /// again), and returns the answer, its body decoded of any content coding.
  func send(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse
  /// Sends `request` as `send(_:body:)` does, but writes the body of a 200 or 206 to `file` as
  /// it arrives (`BodyFile`), with no limit on its size and no deadline on the whole exchange
  /// while bytes keep arriving; the response returned has an empty body then. The body of any
  /// other status comes back in memory. By default the body is received whole, then written.
  func send(_ request: HTTPRequest, body: RequestBody?, saving file: BodyFile) async throws
    -> ApiResponse
  /// Sends `request` as `send(_:body:)` does, but answers as soon as the head of a 2xx is in:
  /// its body comes as it arrives in the response's `stream` (with back-pressure, no limit on
  /// its size, no whole-exchange deadline while bytes keep arriving). The body of any other
  /// status comes back in memory. By default the body is received whole, then streamed.
  func stream(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse
  /// Throws `TransportError.unavailable` when this transport cannot send from this system
  /// (its library cannot be loaded), without sending anything: what `doctor` checks. None by
  /// default.
  func checkAvailability() throws
}

extension Transport {
  public func checkAvailability() throws {}

  public func send(_ request: HTTPRequest, body: RequestBody?, saving file: BodyFile)
    async throws -> ApiResponse
  {
    var response = try await send(request, body: body)
    guard BodyFile.takes(response.status) else { return response }
    do {
      try file.begin(response.head)
      try response.body.withUnsafeBytes { try file.write($0) }
      try file.end(response.head)
    } catch let failure as BodyFile.Failure {
      throw TransportError.cannotSave(file: file.url.path, reason: failure.description)
    }
    response.body = Data()
    return response
  }

  public func stream(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
    var response = try await send(request, body: body)
    guard (200..<300).contains(response.status) else { return response }
    response.stream = ResponseStream(whole: response.body, metrics: response.metrics)
    response.body = Data()
    return response
  }
}

/// An HTTP response, read whole: its head in swift-http-types, and its body.
public struct ApiResponse: Sendable {
  /// Its status and header fields.
  public var head: HTTPResponse
  /// Its body.
  public var body: Data
  /// What the exchange cost, when the transport measured it (`RequestMonitor`s hear it).
  public var metrics: RequestMetrics?
  /// The body of a 2xx as it arrives, from `Transport.stream`; `body` is empty then.
  public var stream: ResponseStream?

  /// A response of `head` and `body`.
  public init(_ head: HTTPResponse, body: Data = Data()) {
    self.head = head
    self.body = body
  }

  /// A response with `status`, header fields named as given, and `body`.
  public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
    var fields = HTTPFields()
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) {
      guard let name = HTTPField.Name(name) else { continue }
      fields.append(HTTPField(name: name, value: value))
    }
    self.init(HTTPResponse(status: .init(code: status), headerFields: fields), body: body)
  }

  /// Its status.
  public var status: Int { head.status.code }

  /// Its header fields.
  public var headerFields: HTTPFields { head.headerFields }

  /// Its `ETag` and `Last-Modified`, which a cached copy of it offers on the next request.
  public var validators: CacheValidators { CacheValidators(headerFields) }

  /// The wait its `Retry-After` asks for (a 429 or a 503 says it), read against `now`; nil
  /// without one.
  public func retryAfter(now: Date = Date()) -> Duration? {
    headerFields[.retryAfter].flatMap { BackoffRetrier.retryAfter($0, now: now) }
  }

  /// Header values by lower-cased name; the values of a repeated field joined by `, `.
  public var headers: [String: String] { head.headerFields.byName }
}

extension HTTPFields {
  /// The values by lower-cased name, those of a repeated field joined by `, `: what
  /// `ApiResponse.headers` and an answer's `headers` give.
  package var byName: [String: String] {
    var headers: [String: String] = [:]
    for field in self {
      let name = field.name.canonicalName
      headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
    }
    return headers
  }
}

/// Failures of the transport itself, before any status is known. The API client turns them
/// into `ApiError`s that name the route.
public enum TransportError: Error, Sendable, Equatable {
  /// Refused, lost or no network: may pass on a retry.
  case cannotConnect(host: String, reason: String)
  /// The name does not resolve: a retry will not help.
  case unknownHost(host: String)
  /// `host` took too long: may pass on a retry.
  case timedOut(host: String)
  /// A redirect was not followed; `reason` says why.
  case redirectRefused(from: String, to: String, reason: String)
  /// The answer's body was larger than the transport takes.
  case tooLarge(host: String, limit: Int)
  /// The answer's header was larger than the transport takes (libcurl: 100 KB in all).
  case headerTooLarge(host: String)
  /// The transport cannot work on this system (its library is missing): one sentence saying
  /// what to install.
  case unavailable(reason: String)
  /// The request's body could not be read (its file is gone or unreadable): nothing was sent
  /// whole, and sending again will not help.
  case bodyUnreadable(reason: String)
  /// The answer's body could not be decoded by its `Content-Encoding` (an unknown coding, or
  /// bytes that are not what it names): bad data from the server, which sending again will not
  /// mend.
  case undecodable(host: String, reason: String)
  /// The body could not be written to its file (`BodyFile`): the disk, or a 206 that does not
  /// continue the file; sending the same request again will not help.
  case cannotSave(file: String, reason: String)

  /// Whether the same request may succeed if sent again.
  public var isTransient: Bool {
    switch self {
    case .cannotConnect, .timedOut: true
    case .unknownHost, .redirectRefused, .tooLarge, .headerTooLarge, .unavailable,
      .bodyUnreadable, .undecodable, .cannotSave:
      false
    }
  }
}

/// Answers requests in process with a handler: the `sample` environment's transport, and a
/// test double that needs no socket. The handler is given the body whole.
public struct InProcessTransport: Transport {
  /// How a request (with its body, whole) is answered.
  public typealias Handler = @Sendable (HTTPRequest, Data?) async throws -> ApiResponse
  private let handler: Handler

  /// Answers every request with `handler`.
  public init(_ handler: @escaping Handler) { self.handler = handler }

  public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
    try Task.checkCancellation()
    let bytes: Data?
    do { bytes = try body?.data() } catch let error as BodyUnreadable {
      throw TransportError.bodyUnreadable(reason: error.description)
    }
    let response = try await handler(request, bytes)
    try Task.checkCancellation()
    return response
  }
}

extension HTTPRequest {
  /// A request for `url`: its scheme, its authority (an IPv6 host in brackets) and its path with
  /// the query, as they are written in the URL. A user and password in the URL are never part
  /// of the request (see `basicAuthorization(in:)`).
  public init(_ method: Method, _ url: URL, headerFields: HTTPFields = [:]) {
    let parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
    var authority = parts?.percentEncodedHost ?? url.host ?? ""
    if authority.contains(":") && !authority.hasPrefix("[") { authority = "[\(authority)]" }
    if let port = parts?.port { authority += ":\(port)" }
    var path = parts?.percentEncodedPath ?? "/"
    if path.isEmpty { path = "/" }
    if let query = parts?.percentEncodedQuery { path += "?\(query)" }
    self.init(
      method: method, scheme: url.scheme?.lowercased(), authority: authority, path: path,
      headerFields: headerFields)
  }

  /// `Basic …` for the user and password written in `url`, as curl and URLSession send them;
  /// nil when it names no user.
  public static func basicAuthorization(in url: URL) -> String? {
    guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
      let user = parts.user
    else { return nil }
    return "Basic " + Data("\(user):\(parts.password ?? "")".utf8).base64EncodedString()
  }

  /// The absolute URL this request goes to (`http://[::1]:8080/api/x?y=1`).
  public var targetURL: URL? { target.flatMap { URL(string: $0) } }

  /// The absolute URL as text, put together without parsing anything.
  var target: String? {
    guard let scheme, let authority else { return nil }
    return "\(scheme)://\(authority)\(path ?? "/")"
  }

  /// The scheme, host and port this request goes to, read from its scheme and authority.
  public var origin: Origin? {
    guard let scheme, let authority else { return nil }
    return Origin(scheme: scheme, authority: authority)
  }

  /// The value of `name`, the values of a repeated field joined by `, `; nil when absent.
  public func value(of name: String) -> String? {
    guard let name = HTTPField.Name(name) else { return nil }
    let values = headerFields[values: name]
    return values.isEmpty ? nil : values.joined(separator: ", ")
  }

  /// Sets `name` to `value`, replacing every field of that name; nil removes them.
  public mutating func set(_ name: String, _ value: String?) {
    guard let name = HTTPField.Name(name) else { return }
    headerFields[name] = value
  }
}

#if canImport(Darwin)
  /// The platform's HTTP transport: URLSession on Apple platforms.
  public typealias PlatformTransport = URLSessionTransport
#else
  /// The platform's HTTP transport: libcurl on Linux.
  public typealias PlatformTransport = CurlTransport
#endif
