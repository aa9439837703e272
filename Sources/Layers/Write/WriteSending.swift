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

extension WriteCall where Value: Decodable {
  /// A write that sends `route` and reads its answer with `mapping`; `name` names it in logs and
  /// `outbox list`, `summary` in sentences (`a loan of book 7`).
  /// `precondition`: the key of the stored entity it edits, whose ETag goes as `If-Match`.
  public init(
    _ name: String, route: Route, summary: String, ordering: String, invalidates: [String] = [],
    optimistic: [OptimisticEdit] = [], precondition: String? = nil, mapping: JSONMapping = .body
  ) throws {
    self.init(
      name: name, summary: summary, request: try route.recorded(), orderingKey: ordering,
      invalidates: invalidates, optimistic: optimistic,
      decode: { answer in try mapping.decode(Value.self, from: answer.body, route: route) })
    self.precondition = precondition
  }
}
