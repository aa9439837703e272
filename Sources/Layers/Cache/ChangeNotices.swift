import Synchronization

/// A store's change notices: each watcher's stream hears, soon after, that a change was
/// committed (by this process or, for a store that can see them, another). Changes that come
/// faster than a watcher reads them are folded into one notice; a watcher that stops reading
/// (its task cancelled, its stream dropped) is forgotten at once.
public final class ChangeNotices: Sendable {
  private struct State {
    var next = 0
    var waiting: [Int: AsyncStream<Void>.Continuation] = [:]
  }

  private let state = Mutex(State())
  private let watched: @Sendable (_ anyone: Bool) -> Void

  /// `watched` is told, under the notices' lock (it must not call back), when the first
  /// watcher comes (`true`) and when the last one goes (`false`): a store polls for other
  /// processes' commits only meanwhile.
  public init(watched: @escaping @Sendable (_ anyone: Bool) -> Void = { _ in }) {
    self.watched = watched
  }

  /// A new watcher's notices; it ends when the watching task is cancelled.
  public func stream() -> AsyncStream<Void> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let id = state.withLock { state in
      let id = state.next
      state.next += 1
      state.waiting[id] = continuation
      if state.waiting.count == 1 { watched(true) }
      return id
    }
    continuation.onTermination = { [weak self] _ in self?.leave(id) }
    return stream
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
