import Synchronization

/// A store's change notices: each watcher's stream hears, soon after, that a change was
/// committed (by this process or, for a store that can see them, another). Changes that come
/// faster than a watcher reads them are folded into one notice; a watcher that stops reading
/// (its task cancelled, its stream dropped) is forgotten at once. When what they watch is gone
/// (the store's file deleted or replaced), `end` ends every watcher's notices with the reason,
/// and any that come later at once.
package final class ChangeNotices: Sendable {
  private struct State {
    var next = 0
    var waiting: [Int: AsyncThrowingStream<Void, any Error>.Continuation] = [:]
    var ended: (any Error)?
  }

  private let state = Mutex(State())
  private let watched: @Sendable (_ anyone: Bool) -> Void

  /// `watched` is told, under the notices' lock (it must not call back), when the first
  /// watcher comes (`true`) and when the last one goes (`false`): a store polls for other
  /// processes' commits only meanwhile.
  public init(watched: @escaping @Sendable (_ anyone: Bool) -> Void = { _ in }) {
    self.watched = watched
  }

  /// A new watcher's notices; they end when the watching task is cancelled, and throw the
  /// reason when what is watched is gone (`end`).
  public func stream() -> AsyncThrowingStream<Void, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: Void.self, throwing: (any Error).self, bufferingPolicy: .bufferingNewest(1))
    let joined = state.withLock { state -> Result<Int, any Error> in
      if let ended = state.ended { return .failure(ended) }
      let id = state.next
      state.next += 1
      state.waiting[id] = continuation
      if state.waiting.count == 1 { watched(true) }
      return .success(id)
    }
    switch joined {
    case .success(let id): continuation.onTermination = { [weak self] _ in self?.leave(id) }
    case .failure(let ended): continuation.finish(throwing: ended)
    }
    return stream
  }

  /// Ends every watcher's notices, and those of any that come later, with `reason`: what they
  /// watch is gone.
  public func end(_ reason: any Error) {
    let waiting = state.withLock { state in
      guard state.ended == nil else { return [AsyncThrowingStream<Void, any Error>.Continuation]() }
      state.ended = reason
      defer {
        if !state.waiting.isEmpty { watched(false) }
        state.waiting = [:]
      }
      return Array(state.waiting.values)
    }
    for continuation in waiting { continuation.finish(throwing: reason) }
  }

  /// Tells every watcher that something changed.
  public func notify() {
    for continuation in state.withLock({ Array($0.waiting.values) }) { continuation.yield() }
  }

  /// How many watch now.
  public var watchers: Int { state.withLock { $0.waiting.count } }

  private func leave(_ id: Int) {
    state.withLock { state in
      guard state.waiting.removeValue(forKey: id) != nil, state.waiting.isEmpty else { return }
      watched(false)
    }
  }
}
