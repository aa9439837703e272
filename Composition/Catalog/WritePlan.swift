import Api
import Domain
import Foundation
import HTTPTypes
import Injection
import Layers

/// One write service's stack as planned from the config: `[outbox, api]`, `[outbox]` or
/// `[api]` (see `Writer`).
struct WritePlan: Sendable {
  /// The entries a write stack may name.
  static let entries = ["api", "outbox"]
  /// What each entry needs built: the api side, or the outbox, whose kept writes change cached
  /// answers. A sent write drops the cached answers it changes where the profile keeps a cache.
  static let needs: [String: Needs] = ["api": .api, "outbox": [.outbox, .cache]]
  static let shapes = [["outbox", "api"], ["outbox"], ["api"]]

  let hasOutbox: Bool
  let hasApi: Bool

  init(_ written: [String], file: String, key: String) throws {
    let entries = StackEntry.rejoined(written).map { $0.trimmingSpaces() }
    guard Self.shapes.contains(entries) else {
      throw ConfigError.malformed(
        file: file, key: key, value: "[\(entries.joined(separator: ", "))]",
        expected: "a write stack: [outbox, api], [outbox] or [api]")
    }
    hasOutbox = entries.contains("outbox")
    hasApi = entries.contains("api")
  }

  var needs: Needs {
    (hasOutbox ? Self.needs["outbox"] ?? [] : []).union(hasApi ? Self.needs["api"] ?? [] : [])
  }

  /// The writer of this stack, for the environment in use; its `api` sends through `sender`.
  func writer(
    _ r: Resolver, sender: @Sendable (ApiClient) -> WriteSender = { .api($0) }
  ) throws -> Writer {
    let context = try r.resolve((any ApiContext).self)
    let origin = context.environment.origin.description
    return Writer(
      origin: origin,
      partition: try r.cachePartition(),
      send: hasApi ? sender(try r.resolve(ApiClient.self)) : nil,
      outbox: hasOutbox ? try r.resolve(Outbox.self) : nil,
      cache: try? r.resolve((any CacheStore).self), warn: try r.resolve(Runtime.self).warn)
  }
}

extension WriteSender {
  /// Sends a kept write's request (a `Route` it `recorded()`) through `client` — environment,
  /// authenticator, adapters, retriers, deadline — with its key as `Idempotency-Key`, which also
  /// makes it safe for backoff to retry. Its answer's bytes are the body. A refusal is thrown as
  /// the `HTTPFailure` it is.
  public static func api(_ client: ApiClient) -> WriteSender {
    sending(client) { $0.body }
  }

  /// As `api`, with the answer's bytes made by `answer` from the whole response (KernelOpenAPI
  /// keeps status and header fields too).
  public static func sending(
    _ client: ApiClient, answer: @escaping @Sendable (ApiResponse) throws -> Data
  ) -> WriteSender {
    WriteSender { request, idempotencyKey, ifMatch in
      var route = try Route(recorded: request)
      if let name = HTTPField.Name("Idempotency-Key") { route.headerFields[name] = idempotencyKey }
      if let ifMatch { route.headerFields[.ifMatch] = ifMatch }
      route.isIdempotent = true
      do {
        return try answer(try await client.response(for: route))
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
      decode: { data in try mapping.decode(Value.self, from: data, route: route) })
    self.precondition = precondition
  }
}
