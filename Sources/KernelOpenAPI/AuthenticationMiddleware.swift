import Api
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// For an app that keeps its own transport: the environment's authenticator around it, as
/// Kernel's client runs it — the credential put on each request to the environment's origin
/// (refreshed first when it expires soon), and a refused one refreshed once for every waiting
/// request, then the request sent again. The request body is read whole so it can be sent
/// twice.
///
/// ```swift
/// let client = Client(
///   serverURL: environmentURL, transport: URLSessionTransport(),
///   middlewares: [AuthenticationMiddleware(client: apiClient), TraceMiddleware(log: log)])
/// ```
public struct AuthenticationMiddleware: ClientMiddleware {
  /// Holds the context (environment, kept credential) and the authenticator.
  public let client: ApiClient
  /// The most a request body may hold: it is read whole, to be replayed after a refresh.
  public let maxRequestBytes: Int

  /// Authenticates through `client`'s context and authenticator; bodies up to `maxRequestBytes` (64
  /// MiB).
  public init(client: ApiClient, maxRequestBytes: Int = 64 << 20) {
    self.client = client
    self.maxRequestBytes = maxRequestBytes
  }

  public func intercept(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
    next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
  ) async throws -> (HTTPResponse, HTTPBody?) {
    guard let authentication = client.authentication else {
      return try await next(request, body, baseURL)
    }
    var data: Data?
    if let body { data = try await Data(collecting: body, upTo: maxRequestBytes) }
    let path = request.path ?? ""
    let route = Route(request.method, path)
    let base = baseURL.absoluteString.trimmingSuffix("/")
    let url = URL(string: base + path) ?? baseURL
    // The part of the absolute path that is the server URL's: what the generated client's
    // relative path goes below.
    let prefix = (URL(string: base)?.path ?? "").trimmingSuffix("/")
    var replays = 0
    while true {
      let absolute = HTTPRequest(
        method: request.method, url: url, headerFields: request.headerFields)
      let authenticated = try await authentication.authenticate(
        absolute, route: route, through: client, replays: replays)
      var sent = request
      // The credential may add a query item (an api key): the relative path keeps it.
      sent.path = authenticated.path.map {
        $0.hasPrefix(prefix) ? String($0.dropFirst(prefix.count)) : $0
      }
      sent.headerFields = authenticated.headerFields
      let (response, answer) = try await next(sent, data.map { HTTPBody($0) }, baseURL)
      guard response.status.kind != .successful else { return (response, answer) }
      var bytes = Data()
      if let answer { bytes = try await Data(collecting: answer, upTo: maxRequestBytes) }
      let refused = ApiResponse(response, body: bytes)
      guard
        try await authentication.replays(
          authenticated, answered: refused, route: route, through: client, replays: replays)
      else { return (response, HTTPBody(bytes)) }
      replays += 1
    }
  }
}

extension String {
  fileprivate func trimmingSuffix(_ suffix: String) -> String {
    hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
  }
}
