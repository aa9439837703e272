import Foundation

/// A value behind an `NSLock`, for the test helpers here that ThreadSanitizer watches.
final class PthreadGuarded<Value>: @unchecked Sendable {
  // `value` is only read or written inside `withLock`.
  private let lock = NSLock()
  private var value: Value

  init(_ value: Value) { self.value = value }

  func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
    lock.lock()
    defer { lock.unlock() }
    return try body(&value)
  }
}
