import Domain
import Foundation
import Synchronization

/// The origins a client found unreachable, each for a while: once one request has spent its
/// retries on a refused connection, a timeout or an unknown host, the requests after it to the
/// same origin fail at once instead of each running its own retry schedule (500 ids against a
/// server that is down failed in 38 s before; now the first fails after its retries and the
/// rest at once). A cache layer above still answers from its copy, as for any unreachable
/// error. After `period` on the client's clock the origin is tried again.
final class UnreachableOrigins: Sendable {
  /// How long an origin is taken as unreachable after a request to it gave up.
  let period: Duration
  private let stopwatch: Stopwatch
  /// By origin: the first failure's error, and when (on `stopwatch`) it was recorded.
  private let known = Mutex<[Origin: (error: TransportError, at: Duration)]>([:])

  /// Origins held unreachable for `period`, measured on `clock`.
  init(period: Duration = .seconds(30), clock: any Clock<Duration>) {
    self.period = period
    stopwatch = Stopwatch(clock)
  }

  /// The failure `origin` was found unreachable with, while that is recent; else nil.
  func failure(of origin: Origin) -> TransportError? {
    let now = stopwatch.elapsed
    return known.withLock { known in
      guard let entry = known[origin] else { return nil }
      guard now - entry.at < period else {
        known[origin] = nil
        return nil
      }
      return entry.error
    }
  }

  /// Notes that a request to `origin` gave up with `error`, when the error says the origin
  /// cannot be reached (not a refused redirect, not a body too large).
  func record(_ error: TransportError, for origin: Origin) {
    switch error {
    case .cannotConnect, .timedOut, .unknownHost:
      let now = stopwatch.elapsed
      known.withLock { $0[origin] = (error, now) }
    case .redirectRefused, .tooLarge, .headerTooLarge, .unavailable, .bodyUnreadable,
      .undecodable, .cannotSave:
      break
    }
  }
}
