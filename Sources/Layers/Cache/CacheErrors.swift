import Domain
import Foundation

/// The api answered an item call with another entity than the one asked (`movies/1004`
/// answering movie 1005): that entity is stored under its own id, and the call is refused as
/// bad data rather than shown as the one asked.
struct ItemMismatch: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The call, as a person calls it (`movie 1004`).
  public let what: String
  /// The entities' type (`Movie`).
  public let type: String
  /// The id asked for, and the id the answer carries.
  public let asked: String
  /// The id the answer carries.
  public let answered: String

  /// Bad data from the api (exit 65).
  public var failure: ServiceFailure { .badData }

  public var description: String {
    "The api answered \(what) with \(type) \(answered), not \(type) \(asked); it was kept as"
      + " \(type) \(answered) and not shown as the one asked."
  }
}

/// The api answered an item call 404 or 410 when last asked, `age` seconds ago: the entity is
/// no longer stored, and where a stored copy would answer, this does (exit 66, not found).
public struct EntityGone: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The call, as a person calls it (`movie 3`).
  public let what: String
  /// Seconds since the api said so.
  public let age: TimeInterval

  /// Not found (exit 66), as the api said.
  public var failure: ServiceFailure { .notFound }

  public var description: String {
    "The api said \(what) does not exist when it was last asked; it is no longer stored (a"
      + " network profile asks again)."
  }
}

/// A stored copy that no longer decodes, asked for where nothing else may answer.
struct CacheUnreadable: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The call, as a person calls it.
  public let what: String
  /// Why the copy does not decode.
  public let reason: String

  /// Unreachable (exit 69): only the api could answer now.
  public var failure: ServiceFailure { .unreachable }

  public var description: String {
    "The cached copy of \(what) could not be read (\(reason)); run it once with a network profile to store it again."
  }
}
