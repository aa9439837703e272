import Domain

/// A service whose calls go through a `LayerStack` (an app's `LayeredBookService`): whoever
/// asks it can observe where its answers came from, as values noted in a recorder the caller
/// gives, not through anything the task carries.
///
/// ```swift
/// let recorder = Provenance.Recorder()
/// let book = try await recorder.observing(books).book(id: 1)
/// recorder.origin  // "cache"
/// ```
public protocol LayeredService: Sendable {
  /// What answers its calls under the layers: the api's source, a fake's, or nil (the store).
  associatedtype Base: Sendable
  /// What answers under the layers, or nil for a store-only stack.
  var base: Source<Base>? { get }
  /// Its layers.
  var layers: LayerStack { get set }
}

extension LayeredService {
  /// What each of its methods does: `call` answered through its layers, down to `fetch` on
  /// the base when none answers it (see `LayerStack.answer(_:from:_:)`).
  ///
  /// ```swift
  /// func book(id: Int) async throws -> Book {
  ///   try await answer(.item(Book.self, id: id)) {
  ///     try await $0.response(.init(.get("books/\(id)"), mapping: library))
  ///   }
  /// }
  /// ```
  public func answer<Value: Sendable>(
    _ call: ServiceCall<Value>,
    _ fetch: @escaping @Sendable (Base) async throws -> any Validated<Value>
  ) async throws -> Value {
    try await layers.answer(call, from: base, fetch).value
  }

  /// `call`'s answers as its stored data changes (see `LayerStack.watch`), refreshed from the
  /// base once by `fetch` when `refresh` and there is one; nil when the stack stores nothing (no
  /// caching layer: an api-only profile), so there is nothing to watch.
  public func watch<Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, refresh: Bool = false,
    _ fetch: @escaping @Sendable (Base) async throws -> any Validated<Value>
  ) -> AsyncStream<Watched<Value>>? {
    guard layers.layers.contains(where: { $0 is CachingLayer }) else { return nil }
    return layers.watch(call, from: base, refresh: refresh, fetch)
  }
}

extension LayeredService {
  /// This service, noting where each of its answers came from in `recorder`.
  public func observed(by recorder: Provenance.Recorder) -> Self {
    var copy = self
    copy.layers = layers.observed(by: recorder)
    return copy
  }
}

extension Provenance.Recorder {
  /// `service` observed by this recorder when it is a `LayeredService`; otherwise `service`
  /// itself, whose answers are its source's own and note nothing.
  public func observing<Service>(_ service: Service) -> Service {
    guard let layered = service as? any LayeredService else { return service }
    return layered.observed(by: self) as? Service ?? service
  }
}
