import Foundation
import HTTPTypes

/// For a request another transport sends: a middleware around a transport that is not Kernel's
/// runs the same authentication as `ApiClient` (see KernelOpenAPI's `AuthenticationMiddleware`).
extension AuthenticationInterceptor {
  /// `request` (absolute: scheme, authority and path) with the credential put on it, refreshed
  /// first when it expires soon, as `client` would send `route` on its `replays`-th replay: for
  /// a middleware around a transport that is not Kernel's (see KernelOpenAPI's
  /// `AuthenticationMiddleware`).
  public func authenticate(
    _ request: HTTPRequest, route: Route, through client: ApiClient, replays: Int = 0
  ) async throws -> HTTPRequest {
    try await authenticate(request, for: Self.attempt(route, client, replays))
  }

  /// Whether `request`, answered `response`, is to be sent again (with the credential a refresh
  /// just made, one refresh for every request waiting); throws the failure when the refusal is
  /// final. False when the answer is not this authentication's business.
  public func replays(
    _ request: HTTPRequest, answered response: ApiResponse, route: Route,
    through client: ApiClient, replays: Int = 0
  ) async throws -> Bool {
    switch await recover(request, from: response, for: Self.attempt(route, client, replays)) {
    case .retry, .retryAfter: return true
    case .fail(let error): throw error
    case .doNotRetry, nil: return false
    }
  }

  fileprivate static func attempt(_ route: Route, _ client: ApiClient, _ replays: Int) -> Attempt {
    var attempt = Attempt(route: route, client: client)
    for _ in 0..<replays { attempt = attempt.next(decidedBy: retrierName) }
    return attempt
  }
}
