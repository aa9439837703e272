import Domain
import Foundation

/// What the layers refuse or cannot answer: the one error of this module, each case with the
/// sentence a person acts on and the kind of failure (the exit code at the command line).
public enum LayerError: Error, Sendable, Hashable, CustomStringConvertible, ClassifiedError {
  /// Nothing is stored for the call `what` (`book 3`, as a person calls it) and the policy does
  /// not ask the api (exit 69).
  case miss(what: String)
  /// The call `what` needs the api (a write, or a call no cache answers), and the stack has
  /// none (exit 69).
  case needsApi(what: String)
  /// The api answered the item call `what` 404 or 410 when last asked, `age` seconds ago: the
  /// entity is no longer stored, and where a stored copy would answer, this does (exit 66).
  case gone(what: String, age: TimeInterval)
  /// The stored copy of `what` no longer decodes (`reason`), asked where nothing else may
  /// answer (exit 69).
  case unreadable(what: String, reason: String)
  /// The api answered the item call `what` with another entity of `type` (`asked`, then
  /// `answered`): that entity is stored under its own id, and the call is refused as bad data
  /// rather than shown as the one asked (exit 65).
  case mismatch(what: String, type: String, asked: String, answered: String)
  /// The local query `query` names `field`, which the entity `type` does not have; its fields
  /// are `known` (exit 78: the app's declaration is wrong).
  case unknownField(field: String, type: String, query: String, known: [String])
  /// A local query's `field` is not a key path (exit 78).
  case notAField(String)
  /// The write `what` edits the stored copy `key` only if unchanged (If-Match), and no version
  /// of it is stored: refused before anything is sent, kept or edited (a conflict, exit 65).
  case unknownVersion(what: String, key: String)
  /// The call `what` carries no request for the api, so it cannot be written (exit 78).
  case notAWrite(what: String)
  /// Syncing the feed `feed` needs the api, and the stack has none (exit 69).
  case syncNeedsApi(feed: String)
  /// Syncing the feed `feed` keeps what the api says, and the stack stores nothing (exit 78).
  case syncNeedsStore(feed: String)

  public var failure: ServiceFailure {
    switch self {
    case .miss, .needsApi, .unreadable, .syncNeedsApi: .unreachable
    case .gone: .notFound
    case .mismatch: .badData
    case .unknownField, .notAField, .notAWrite, .syncNeedsStore: .configuration
    case .unknownVersion: .conflict
    }
  }

  public var description: String {
    switch self {
    case .miss(let what):
      "Nothing is cached for \(what), and the offline profile does not ask the api; run it once"
        + " with a network profile."
    case .needsApi(let what):
      "\(what.openingASentence) needs the api, and this profile's"
        + " stack has none; run it with a network profile."
    case .gone(let what, _):
      "The api said \(what) does not exist when it was last asked; it is no longer stored (a"
        + " network profile asks again)."
    case .unreadable(let what, let reason):
      "The cached copy of \(what) could not be read (\(reason)); run it once with a network"
        + " profile to store it again."
    case .mismatch(let what, let type, let asked, let answered):
      "The api answered \(what) with \(type) \(answered), not \(type) \(asked); it was kept as"
        + " \(type) \(answered) and not shown as the one asked."
    case .unknownField(let field, let type, let query, let known):
      "The local query of \(query) names the field \(field), which \(type) does not have; its"
        + " fields are \(known.joined(separator: ", "))."
    case .notAField(let field):
      "The local query's field \"\(field.prefix(60))\" is not a key path (letters, digits and _"
        + " in levels joined by .); fix the call's description."
    case .unknownVersion(let what, let key):
      "\(what.openingASentence) was not sent: it edits \(key) only if unchanged (If-Match), and no version of"
        + " \(key) is stored (it was seen only in a list, or never read on its own); read it on"
        + " its own first, then write again."
    case .notAWrite(let what):
      "\(what.openingASentence) carries no request for the api, so it cannot be written; declare it"
        + " with one."
    case .syncNeedsApi(let feed):
      "Syncing \(feed) needs the api, and this profile's stack has none; run it with a network"
        + " profile."
    case .syncNeedsStore(let feed):
      "Syncing \(feed) keeps what the api says in the store, and this profile's stack keeps"
        + " nothing; run it with a profile that stores (layered)."
    }
  }
}

extension LayerError {
  /// What a call no layer answered is: a miss when a store could answer it once the api has,
  /// else a call that needs the api (a write).
  static func missing<Value>(_ call: ServiceCall<Value>) -> LayerError {
    call.codec != nil ? .miss(what: call.summary) : .needsApi(what: call.summary)
  }
}
