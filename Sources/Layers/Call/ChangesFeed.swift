import Api
import Domain
import Foundation

/// A changes feed: a route that takes a since-token and answers the entities of one type
/// created, updated and deleted since then, with the next token, a page at a time
/// (WatermelonDB's pull). Declared once, with the shape of its answer; a stack brings the store
/// up to date with it (`ServiceStack.sync(_:progress:)`), keeping the token per partition in the
/// same transaction as the changes it follows.
///
/// ```swift
/// extension ChangesFeed {
///   // GET books/changes?since=T: {"changes": {"books": {"created", "updated", "deleted"}},
///   //                              "timestamp": T, "hasMore": false}
///   static let books = ChangesFeed.watermelon(Book.self, table: "books", path: "books/changes")
///   // GET books/feed?cursor=C: {"items": [...], "deleted": [ids], "next_cursor": C}
///   static let flat = ChangesFeed(
///     Book.self, name: "books", path: "books/feed", since: "cursor", changed: "items",
///     deleted: "deleted", token: "next_cursor")
/// }
/// ```
public struct ChangesFeed: Sendable {
  /// What a person calls what it changes: `movies`.
  public let name: String
  /// Where its token is kept in each partition (`movies/changes`).
  public let key: String
  /// The type of the entities it changes (`Movie`), as their rows are keyed.
  public let type: String
  /// The version of that type's stored form (`StoredModel`), which its rows are stored at.
  public let modelVersion: Int
  /// Whether that type declares migrations from older versions (`StoredModel`).
  public let migrates: Bool
  /// The request for the page after a token (nil: from the start).
  /// How many stored rows of its type that should read as it do not
  /// (`EntityShape.damaged(_:)`).
  package let damaged: @Sendable ([CacheEntry]) -> Int
  let route: @Sendable (_ since: String?) -> Route
  /// A page's body read as its changes.
  let read: @Sendable (Data, Route) throws -> ChangesPage

  /// A feed of `Entity` values at `path`, asked with the token in the query item `since`
  /// (`first`, or none, from the start): the entities at `changed` (and at `created` and
  /// `updated`, when the feed splits them) are stored, the ids at `deleted` leave the store, the
  /// token at `token` is asked with next (ids and tokens are strings or numbers: another is the
  /// api's bad data, naming its field); while `hasMore` says so (when the feed has it), else
  /// while a page changes anything, the next page is asked. Key paths are read below
  /// `mapping`'s own (an envelope's `data`), whose dates and keys decode the entities as the api
  /// writes them. Its token is kept under `path`.
  public init<Entity: Identifiable & Codable & Sendable>(
    _ entity: Entity.Type, name: String, path: String, since: String, first: String? = nil,
    mapping: JSONMapping = .body, created: String? = nil, updated: String? = nil,
    changed: String? = nil, deleted: String, token: String, hasMore: String? = nil
  ) {
    self.name = name
    self.key = path
    let shape = EntityShape<[Entity]>.list(Entity.self)
    self.type = shape.type
    self.modelVersion = shape.modelVersion
    self.migrates = shape.migrates
    damaged = shape.damaged
    route = { token in
      .get(path, query: (token ?? first).map { [URLQueryItem(name: since, value: $0)] } ?? [])
    }
    read = { body, route in
      func entities(_ path: String?) throws -> [StoredEntity] {
        guard let path else { return [] }
        let found = try mapping.below(path).decode([Entity]?.self, from: body, route: route)
        return try shape.entities(of: found ?? [])
      }
      let ids = try mapping.below(deleted).decode([JSONValue]?.self, from: body, route: route)
      let next = try mapping.below(token).decode(JSONValue?.self, from: body, route: route)
      // An id or a token that is neither a string nor a number is the api's bad data: never a
      // deletion or a next page silently missed.
      func text(_ value: JSONValue, at field: String) throws -> String {
        guard let text = value.token else {
          let found =
            switch value {
            case .object: "an object"
            case .array: "a list"
            case .boolean: "true or false"
            default: "null"
            }
          throw ApiError.decoding(
            route: route, field: field, reason: "expected a string or a number, found \(found)")
        }
        return text
      }
      let page = ChangesPage(
        created: try entities(created) + entities(changed), updated: try entities(updated),
        deleted: try (ids ?? []).enumerated().map { try text($1, at: "\(deleted)[\($0)]") },
        token: try next.flatMap { $0 == .null ? nil : try text($0, at: token) }, hasMore: false)
      let more = try hasMore.map {
        try mapping.below($0).decode(Bool?.self, from: body, route: route) ?? false
      }
      var read = page
      read.hasMore = more ?? !(page.created.isEmpty && page.updated.isEmpty && page.deleted.isEmpty)
      return read
    }
  }

  /// WatermelonDB's pull shape at `path`, asked with `since=<token>` (0 from the start):
  /// `{"changes": {table: {"created": [...], "updated": [...], "deleted": [ids]}},
  /// "timestamp": T, "hasMore": bool}`, the next page asked with `since=T` while `hasMore`.
  public static func watermelon<Entity: Identifiable & Codable & Sendable>(
    _ entity: Entity.Type, table: String, path: String, mapping: JSONMapping = .body
  ) -> ChangesFeed {
    ChangesFeed(
      entity, name: table, path: path, since: "since", first: "0", mapping: mapping,
      created: "changes.\(table).created", updated: "changes.\(table).updated",
      deleted: "changes.\(table).deleted", token: "timestamp", hasMore: "hasMore")
  }
}

/// One page of a changes feed as read: its entities as stored rows, the ids it deletes, the
/// token to ask with next, and whether there is more.
struct ChangesPage: Sendable {
  var created: [StoredEntity]
  var updated: [StoredEntity]
  var deleted: [String]
  var token: String?
  var hasMore: Bool
}

/// What a sync changed, for people (`+12 ~3 -2 movies`) and scripts.
public struct SyncSummary: Sendable, Hashable, CustomStringConvertible {
  /// The feed's name (`movies`).
  public var name: String
  /// Entities the feed said were created, updated and deleted.
  public var created = 0
  /// Updated.
  public var updated = 0
  /// Deleted.
  public var deleted = 0
  /// Pages applied.
  public var pages = 0
  /// The token the next sync asks with.
  public var token: String?

  /// A summary of nothing yet for the feed `name`.
  public init(name: String) { self.name = name }

  /// `+12 ~3 -2 movies`.
  public var description: String { "+\(created) ~\(updated) -\(deleted) \(name)" }
}
