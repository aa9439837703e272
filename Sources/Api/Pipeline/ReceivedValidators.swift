import Domain
import Synchronization

/// The validators of the answer one conditional call got (see `ApiClient.offering(_:)`): read
/// by the one who made the call, once it returns.
public final class ReceivedValidators: Sendable {
  private let slot = Mutex<CacheValidators?>(nil)

  public init() {}

  /// Those of the last 2xx answer; nil when none came.
  public var validators: CacheValidators? { slot.withLock { $0 } }

  func set(_ validators: CacheValidators) { slot.withLock { $0 = validators } }
}
