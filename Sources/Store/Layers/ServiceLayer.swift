import Domain
import Foundation
import GRDB

/// One call of a service, as the layers see it: its name and key, and how the cache reads and
/// writes its result. A service gets every layer by describing its calls this way once.
public struct ServiceCall<Value: Sendable>: Sendable {
  /// The call, e.g. `topGrossingMovies`, for logs.
  public let name: String
  /// What identifies its result, e.g. `movies/topGrossing/2016`.
  public let key: String
  /// What a person calls it, e.g. `the top-grossing movies of 2016`.
  public let summary: String
  /// How the cache stores and finds its result; nil when it is never cached.
  public let cache: CacheMapping<Value>?

  public init(name: String, key: String, summary: String, cache: CacheMapping<Value>?) {
    self.name = name
    self.key = key
    self.summary = summary
    self.cache = cache
  }
}

/// How one operation's result lives in the cache database.
public struct CacheMapping<Value: Sendable>: Sendable {
  /// The stored result and when it was stored, or nil.
  public let read: @Sendable (Database) throws -> (value: Value, storedAt: Date)?
  /// Stores a result; runs inside the transaction that also records the entry.
  public let write: @Sendable (Value, Date, Database) throws -> Void

  public init(
    read: @escaping @Sendable (Database) throws -> (value: Value, storedAt: Date)?,
    write: @escaping @Sendable (Value, Date, Database) throws -> Void
  ) {
    self.read = read
    self.write = write
  }
}

/// Something that wraps every call of a service: caching, logging, de-duplication, memory.
/// Written once, it serves every operation of every service.
public protocol ServiceLayer: Sendable {
  func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value
}

/// Layers applied in order, the first outermost: `[logging, cache, …]` then the base.
public struct LayerStack: ServiceLayer {
  public let layers: [any ServiceLayer]

  public init(_ layers: [any ServiceLayer]) { self.layers = layers }

  public func run<Value: Sendable>(
    _ operation: ServiceCall<Value>, next: @escaping @Sendable () async throws -> Value
  ) async throws -> Value {
    var call = next
    for layer in layers.reversed() {
      let inner = call
      call = { try await layer.run(operation, next: inner) }
    }
    return try await call()
  }
}
