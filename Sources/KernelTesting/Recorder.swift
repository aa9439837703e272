import Foundation

/// Values recorded from any thread, e.g. by a server route or a fake transport, in order.
public final class Recorder<Value: Sendable>: Sendable {
  private let values = PthreadGuarded<[Value]>([])
  private let counter = Counter()

  /// Nothing recorded yet.
  public init() {}

  /// Records `value`.
  public func append(_ value: Value) {
    values.withLock { $0.append(value) }
    counter.increment()
  }

  /// Everything recorded so far.
  public var all: [Value] { values.withLock { $0 } }

  /// Returns once at least `count` values are recorded.
  public func reach(_ count: Int) async { await counter.reach(count) }
}
