import Api
import Domain

extension LayerStack {
  /// The answers of `call` as its stored data changes: the stored answer at once (or
  /// `nothingStored`), then a new element each time a commit to the store (by this process or
  /// another sharing it) changes what the call reads — its own row, or any entity it holds,
  /// however that entity was stored; with `refresh`, the call also asks the api once when the
  /// caching layer's policy would (`CachingLayer.refresh`), its answer arriving as the store
  /// changes, its failure as a
  /// `failed` element that does not end the watch. Never two equal elements in a row.
  /// Cancelling the consuming task ends it and frees what it held. A stack with no caching
  /// layer has nothing to watch: it gives the refreshed answer, or its failure, then ends.
  public func watch<Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, client: ApiClient?, refresh: Bool = false
  ) -> AsyncStream<Watched<Value>> {
    let index = layers.firstIndex { $0 is CachingLayer }
    let cache = index.flatMap { layers[$0] as? CachingLayer }
    // The refresh asks the api through the caching layer and what is under it, never falling
    // back to the stored copy: its failure is the api's, shown beside what is stored.
    let below = LayerStack(index.map { Array(layers[($0 + 1)...]) } ?? [])
    return AsyncStream(bufferingPolicy: .bufferingNewest(16)) { continuation in
      let task = Task {
        let refreshed = { () async -> Watched<Value>? in
          do {
            guard let cache else {
              return .answer(try await run(call, next: .api(call, client)))
            }
            let next = Next<Value> { offered in
              try await below.run(
                call,
                next: Next { try await Next.api(call, client)(offering: $0 ?? offered) })
            }
            try await cache.refresh(call, next: next)
            return nil
          } catch is CancellationError {
            return nil
          } catch {
            return .failed(WatchFailure(error))
          }
        }
        guard let cache else {
          if let element = await refreshed() { continuation.yield(element) }
          return continuation.finish()
        }
        // Listening before the first read: no change between the two is missed.
        let changes = cache.store.changes()
        var last: Watched<Value>?
        func show(_ element: Watched<Value>) {
          guard element != last else { return }
          last = element
          continuation.yield(element)
        }
        show(await cache.current(call))
        let refreshing =
          refresh && client != nil && call.fetch != nil
          ? Task {
            if let failure = await refreshed() { continuation.yield(failure) }
          } : nil
        do {
          for try await _ in changes { show(await cache.current(call)) }
        } catch {
          continuation.yield(.ended(WatchFailure(error)))
        }
        refreshing?.cancel()
        continuation.finish()
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}

extension CachingLayer {
  /// Asks below for `call` when the layer's policy would (never under `cacheOnly`; under
  /// `cacheFirst` and `staleWhileRevalidate` only for a copy missing, stale or past its age),
  /// offering the stored copy's validators, and stores the answer as a network read does, but
  /// never answers from the store instead: a failure is thrown.
  func refresh<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws {
    guard let codec = call.codec else { return }
    let found = try? await read(call, codec)
    switch policy {
    case .cacheOnly: return
    case .cacheFirst(let maxAge), .staleWhileRevalidate(let maxAge):
      if let found, !found.isStale, found.answer.age <= maxAge.seconds { return }
    case .networkOnly, .networkFirst, .cacheThenNetwork: break
    }
    _ = try await fetch(call, codec, next, stored: found?.answer)
  }

  /// What the store holds for `call` now, whatever the policy: its stored answer, else what
  /// its local query finds; `nothingStored`, or `failed` when the store cannot be read.
  func current<Value: Sendable>(_ call: ServiceCall<Value>) async -> Watched<Value> {
    guard let codec = call.codec else { return .nothingStored }
    do {
      if let found = try await read(call, codec) { return .answer(found.answer) }
      if let local = try await localAnswer(call) { return .answer(local) }
      return .nothingStored
    } catch {
      return .failed(WatchFailure(error))
    }
  }
}
