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
