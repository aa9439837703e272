import Domain
import Observation
import Synchronization

/// A watched call as an `@Observable` model (Swift's Observation module): `latest` is the
/// watch's newest element, for SwiftUI and for any code using `withObservationTracking`. It
/// stops watching when it is released or `stop()` is called. It is main-actor isolated, as a
/// view model is: made, read and stopped on the main actor, its `latest` set there.
///
/// ```swift
/// let shelf = LiveAnswer(books.watch(.shelf) ?? AsyncStream { $0.finish() })
/// // SwiftUI: List(shelf.latest?.value ?? []) { … }
/// ```
@MainActor @Observable
public final class LiveAnswer<Value: Sendable & Equatable> {
  /// The newest element of the watch; nil until the first arrives.
  public private(set) var latest: Watched<Value>?
  @ObservationIgnored private let watching = Watching()

  /// Follows `watch` until released or stopped.
  public init(_ watch: AsyncStream<Watched<Value>>) {
    watching.start(
      Task { [weak self] in
        for await element in watch {
          guard let self else { return }
          self.latest = element
        }
      })
  }

  /// Stops watching: `latest` keeps the last element.
  public func stop() { watching.stop() }

  /// The watching task, cancelled from anywhere (a release included).
  private final class Watching: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)

    func start(_ new: Task<Void, Never>) { task.withLock { $0 = new } }

    func stop() {
      task.withLock { task in
        task?.cancel()
        task = nil
      }
    }

    deinit { stop() }
  }
}
