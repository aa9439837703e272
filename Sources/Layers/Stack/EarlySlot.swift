import Synchronization

/// The first early answer of a call, kept so its final answer is delivered only when it differs.
final class EarlySlot<Value: Sendable>: Sendable {
  private let slot = Mutex<Answer<Value>?>(nil)

  /// Keeps `answer` if none is kept yet; says whether it was.
  func set(_ answer: Answer<Value>) -> Bool {
    slot.withLock { kept in
      guard kept == nil else { return false }
      kept = answer
      return true
    }
  }

  var value: Answer<Value>? { slot.withLock { $0 } }
}
