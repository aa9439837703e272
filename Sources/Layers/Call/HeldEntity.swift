import Domain
import Foundation

/// One field of an entity's JSON that holds entities of another type
/// (`StoredModel.heldEntities`): an object, a list of them, or null.
public struct HeldEntity: Sendable {
  /// The field's key path in the holder's JSON, as stored (`supplier`, `credits.cast`).
  public let field: String
  /// The held entities' type, as the store names it (`Supplier`).
  public let type: String
  /// The field of a held entity's JSON that is its id (`id`).
  public let idField: String
  let modelVersion: Int
  let upgrade: (@Sendable (Data, Int) throws -> Data)?
  /// What each entity of the field carries of it.
  let stored: StoredEntity.Held
  /// What the held type holds in turn; read when needed, so two types may hold each other.
  let nested: @Sendable () -> [HeldEntity]

  /// The entities of `entity` at `field` of the holder's JSON, each identified by its `idField`
  /// and stored under `type` (the Swift type's name unless given), as its own calls store it.
  public init<E: Identifiable & Codable & Sendable>(
    _ field: String, _ entity: E.Type, id idField: String = "id", type: String? = nil
  ) {
    self.field = field
    self.type = type ?? "\(E.self)"
    self.idField = idField
    self.modelVersion = StoredModels.version(of: E.self)
    self.upgrade = StoredModels.upgrade(of: E.self)
    self.stored = StoredEntity.Held(type: self.type, modelVersion: modelVersion)
    self.nested = { HeldEntity.declared(by: E.self) }
  }

  /// What `type` declares it holds, or nothing.
  static func declared<E>(by type: E.Type) -> [HeldEntity] {
    (type as? any StoredModel.Type)?.heldEntities ?? []
  }

  /// Held entities are followed this deep at most, so a cycle of values ends.
  static let depth = 8

  /// The objects at this field of `holder`, with their ids.
  func objects(in holder: JSONValue) -> [(id: String, value: JSONValue)] {
    let found: [JSONValue]
    switch holder[LocalQuery.path(field)] {
    case .array(let list)?: found = list
    case let object?: found = [object]
    case nil: found = []
    }
    return found.compactMap { value in
      guard case .object = value, let id = value[[idField]]?.token else { return nil }
      return (id, value)
    }
  }

  /// Every entity `holder` holds as `held` declares, and those they hold, to `depth`.
  static func entities(in holder: JSONValue, _ held: [HeldEntity], depth: Int = 0)
    -> [StoredEntity]
  {
    guard depth < Self.depth else { return [] }
    let encoder = JSONEncoder()
    return held.flatMap { field in
      field.objects(in: holder).flatMap { object -> [StoredEntity] in
        guard let payload = try? encoder.encode(object.value) else { return [] }
        return [
          StoredEntity(id: object.id, payload: payload, held: field.stored)
        ] + entities(in: object.value, field.nested(), depth: depth + 1)
      }
    }
  }

  /// `holders` with each entity they hold as `held` declares replaced by its own stored row's
  /// copy (`read` gives the rows of the store keys asked, as current JSON), to `depth`; one
  /// read per field and level. A held entity with no row keeps the copy its holder came with.
  static func reading(
    _ holders: [JSONValue], _ held: [HeldEntity], depth: Int = 0,
    _ read: @Sendable (HeldEntity, _ ids: [String]) async -> [String: JSONValue]
  ) async -> [JSONValue] {
    guard depth < Self.depth else { return holders }
    var holders = holders
    for field in held {
      let ids = Array(Set(holders.flatMap { field.objects(in: $0).map(\.id) }))
      guard !ids.isEmpty else { continue }
      let found = await read(field, ids)
      guard !found.isEmpty else { continue }
      let keys = Array(found.keys)
      let fresh = await reading(
        keys.map { found[$0] ?? .null }, field.nested(), depth: depth + 1, read)
      let rows = Dictionary(uniqueKeysWithValues: zip(keys, fresh))
      holders = holders.map { field.replacing(in: $0, with: rows) }
    }
    return holders
  }

  /// A stored row of this type as its current version reads (`StoredModel`), or nil when it
  /// is not JSON or does not migrate.
  func current(_ row: CacheEntry) -> JSONValue? {
    var payload = row.payload
    if row.modelVersion < modelVersion, let upgrade {
      guard let upgraded = try? upgrade(payload, row.modelVersion) else { return nil }
      payload = upgraded
    }
    return try? JSONDecoder().decode(JSONValue.self, from: payload)
  }

  /// `holder` with each object at this field whose id is in `rows` replaced by that row.
  private func replacing(in holder: JSONValue, with rows: [String: JSONValue]) -> JSONValue {
    func fresh(_ value: JSONValue) -> JSONValue {
      guard case .object = value, let id = value[[idField]]?.token else { return value }
      return rows[id] ?? value
    }
    return holder.updating(LocalQuery.path(field)[...]) { value in
      if case .array(let list) = value { return .array(list.map(fresh)) }
      return fresh(value)
    }
  }
}

extension JSONValue {
  /// A token or an id as text: a number's digits, a string itself; nil for anything else.
  var token: String? {
    switch self {
    case .integer(let number): "\(number)"
    case .number(let number): Int64(exactly: number).map { "\($0)" } ?? "\(number)"
    case .string(let text): text
    default: nil
    }
  }

  /// This value with the value at `path` (object keys) changed by `change`; as it is when
  /// there is none.
  func updating(_ path: ArraySlice<String>, _ change: (JSONValue) -> JSONValue) -> JSONValue {
    guard let key = path.first else { return change(self) }
    guard case .object(var fields) = self, let inner = fields[key] else { return self }
    fields[key] = inner.updating(path.dropFirst(), change)
    return .object(fields)
  }
}
