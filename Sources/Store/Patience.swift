import Foundation
import Synchronization

/// How long statements wait for another process's lock: `perStatement` each, and while the
/// file is being opened, that long for all of opening's statements together.
final class Patience: Sendable {
  private static let pause: UInt32 = 10_000  // microseconds between tries
  private let perStatementTries: Int
  private let perStatement: Duration
  private let openingUntil = Mutex<ContinuousClock.Instant?>(nil)

  init(perStatement: Duration) {
    self.perStatement = perStatement
    perStatementTries = max(1, Int(perStatement / .microseconds(Int(Self.pause))))
  }

  func startOpening() { openingUntil.withLock { $0 = .now + perStatement } }
  func endOpening() { openingUntil.withLock { $0 = nil } }

  /// SQLite's busy handler: true to try again after a short pause.
  func mayWait(tries: Int) -> Bool {
    if let until = openingUntil.withLock({ $0 }), ContinuousClock.now >= until { return false }
    guard tries < perStatementTries else { return false }
    usleep(Self.pause)
    return true
  }
}
