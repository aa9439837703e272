import Api
import Foundation

/// One GET of `url` through the platform's transport, with `headers`, whatever the status: a
/// test's plain HTTP client for a server it started. Redirects are not followed.
public func fetch(_ url: URL, headers: [String: String] = [:]) async throws -> ApiResponse {
  var request = HTTPRequest(.get, url)
  for (name, value) in headers { request.set(name, value) }
  return try await PlatformTransport(configuration: .loopbackTests).send(request, body: nil)
}
