import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Sends one HTTP request and returns what came back, whatever the status: judging the status
/// is validation's job. Cancelling the calling task cancels the request.
public protocol Transport: Sendable {
  func send(_ request: URLRequest) async throws -> ApiResponse
}

/// An HTTP response, read whole.
public struct ApiResponse: Sendable {
  public let status: Int
  /// Header values by lower-cased name.
  public let headers: [String: String]
  public let body: Data

  public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = Dictionary(
      headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    self.body = body
  }
}

/// Failures of the transport itself, before any status is known. The API client turns them
/// into `ApiError`s that name the route.
public enum TransportError: Error, Sendable {
  /// Refused, lost or no network: may pass on a retry.
  case cannotConnect(host: String, reason: String)
  /// The name does not resolve: a retry will not help.
  case unknownHost(host: String)
  case timedOut(host: String)
  /// A redirect was not followed; `reason` says why.
  case redirectRefused(from: String, to: String, reason: String)

  /// Whether the same request may succeed if sent again.
  public var isTransient: Bool {
    switch self {
    case .cannotConnect, .timedOut: true
    case .unknownHost, .redirectRefused: false
    }
  }
}

/// Answers requests in process with a handler: the `sample` environment's transport, and a
/// test double that needs no socket.
public struct InProcessTransport: Transport {
  public typealias Handler = @Sendable (URLRequest) async throws -> ApiResponse
  private let handler: Handler

  public init(_ handler: @escaping Handler) { self.handler = handler }

  public func send(_ request: URLRequest) async throws -> ApiResponse {
    try Task.checkCancellation()
    let response = try await handler(request)
    try Task.checkCancellation()
    return response
  }
}
