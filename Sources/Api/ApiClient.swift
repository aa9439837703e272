import Domain
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The request pipeline every api service uses: route → URL in the context's current
/// environment → transport → validation → decoding. Transport failures become `ApiError`s
/// naming the route.
public final class ApiClient: Sendable {
  public let context: any ApiContext
  public let transport: any Transport

  public init(context: any ApiContext, transport: any Transport) {
    self.context = context
    self.transport = transport
  }

  /// The validated (2xx) response of `route`.
  public func response(for route: Route) async throws -> ApiResponse {
    let environment = context.environment
    var request = URLRequest(url: route.url(in: environment))
    request.httpMethod = route.method
    let response: ApiResponse
    do {
      response = try await transport.send(request)
    } catch let error as TransportError {
      throw Self.apiError(error, route: route)
    }
    guard (200..<300).contains(response.status) else {
      throw ApiError.status(
        route: route, code: response.status, excerpt: ApiError.excerpt(response.body))
    }
    return response
  }

  /// The value of `route` decoded from its body by `mapping`.
  public func value<T: Decodable>(_ type: T.Type, for route: Route, mapping: JSONMapping = .body)
    async throws -> T
  {
    let response = try await response(for: route)
    return try mapping.decode(type, from: response.body, route: route)
  }

  static func apiError(_ error: TransportError, route: Route) -> ApiError {
    switch error {
    case .cannotConnect(let host, let reason):
      .unreachable(route: route, host: host, reason: reason)
    case .timedOut(let host): .timedOut(route: route, host: host)
    case .redirectRefused(_, let to, let reason):
      .redirectRefused(route: route.description, location: to, reason: reason)
    }
  }
}
