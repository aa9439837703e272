import Api
import Foundation
import HTTPTypes

extension WriteSender {
  /// Sends a kept write's request (a `Route` it `recorded()`) through `client` — environment,
  /// authenticator, adapters, retriers, deadline — with its key as `Idempotency-Key`, which also
  /// makes it safe for backoff to retry, and returns the api's answer. A refusal is thrown as
  /// the `HTTPFailure` it is.
  public static func api(_ client: ApiClient) -> WriteSender {
    WriteSender { request, idempotencyKey, ifMatch in
      var route = try Route(recorded: request)
      if let name = HTTPField.Name("Idempotency-Key") { route.headerFields[name] = idempotencyKey }
      if let ifMatch { route.headerFields[.ifMatch] = ifMatch }
      route.isIdempotent = true
      do {
        return try await client.response(for: route)
      } catch ApiError.status(let failure) {
        throw failure
      }
    }
  }
}
