import Foundation
import Synchronization

/// The fields a `Decodable` type's JSON has, as its own decoding asks for them: its coding
/// keys, and those of the values it holds, as key paths (`cast.*.name`, `*` for any index). Found
/// once per type by decoding it from a decoder that answers every question with a blank value
/// and notes each key asked, so a local query's field is checked against the type, not against
/// what happens to be stored (`LocalQuery.unknownFields`).
enum FieldNames {
  private static let found = Mutex<[ObjectIdentifier: Set<String>?]>([:])

  /// The key paths of `type`'s fields; nil when its decoding could not be followed to its end
  /// (a custom `init(from:)` that refuses a blank value), and then nothing is refused.
  static func of<T: Decodable>(_ type: T.Type) -> Set<String>? {
    let id = ObjectIdentifier(type)
    if let known = found.withLock({ $0[id] }) { return known }
    let notes = Notes()
    let fields: Set<String>? =
      (try? T(from: Blank(notes: notes, codingPath: []))) == nil ? nil : notes.paths
    found.withLock { $0[id] = .some(fields) }
    return fields
  }

  /// `field` (`cast.0.name`) as `of` writes it: an index as `*`.
  static func normalized(_ field: String) -> String {
    LocalQuery.path(field).map { Int($0) == nil ? $0 : "*" }.joined(separator: ".")
  }

  /// The key paths asked for so far. Used by one decoding on one thread.
  final class Notes {
    var paths: Set<String> = []
  }

  /// The index key of a list's elements.
  struct Index: CodingKey {
    var stringValue: String { "*" }
    var intValue: Int? { 0 }
    init() {}
    init?(stringValue: String) { nil }
    init?(intValue: Int) { nil }
  }

  /// A decoder whose every value is blank (0, "", false, one element per list) and whose every
  /// key is noted.
  struct Blank: Decoder {
    let notes: Notes
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
      KeyedDecodingContainer(Keyed<Key>(notes: notes, codingPath: codingPath))
    }
    func unkeyedContainer() -> any UnkeyedDecodingContainer {
      List(notes: notes, codingPath: codingPath)
    }
    func singleValueContainer() -> any SingleValueDecodingContainer {
      Single(notes: notes, codingPath: codingPath)
    }

    /// A decoder one key further down, noted.
    func at(_ key: any CodingKey) -> Blank {
      let path = codingPath + [key]
      notes.paths.insert(path.map(\.stringValue).joined(separator: "."))
      return Blank(notes: notes, codingPath: path)
    }

    /// A blank value of `type`: a primitive's zero, else one decoded from a blank decoder; a
    /// type that holds itself is followed 12 levels down.
    func blank<T: Decodable>(_ type: T.Type) throws -> T {
      guard codingPath.count < 12 else {
        throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "deep"))
      }
      switch type {
      case is String.Type: return try cast("")
      case is Bool.Type: return try cast(false)
      case is Double.Type: return try cast(0.0)
      case is Float.Type: return try cast(Float(0))
      case is Int.Type: return try cast(0)
      case is Int64.Type: return try cast(Int64(0))
      case is Int32.Type: return try cast(Int32(0))
      case is UInt.Type: return try cast(UInt(0))
      case is UInt64.Type: return try cast(UInt64(0))
      default: return try T(from: self)
      }
    }

    private func cast<T, U>(_ value: U) throws -> T {
      guard let value = value as? T else {
        throw DecodingError.typeMismatch(
          T.self, .init(codingPath: codingPath, debugDescription: ""))
      }
      return value
    }
  }

  struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let notes: Notes
    let codingPath: [any CodingKey]
    var allKeys: [Key] { [] }
    private var decoder: Blank { Blank(notes: notes, codingPath: codingPath) }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) -> Bool {
      _ = decoder.at(key)
      return false
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
      try decoder.at(key).blank(type)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
      // An optional field a blank cannot fill is still a field.
      try? decoder.at(key).blank(type)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
      -> KeyedDecodingContainer<NestedKey>
    {
      decoder.at(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
      decoder.at(key).unkeyedContainer()
    }
    func superDecoder() -> any Decoder { decoder }
    func superDecoder(forKey key: Key) -> any Decoder { decoder.at(key) }
  }

  /// A list of one element.
  struct List: UnkeyedDecodingContainer {
    let notes: Notes
    let codingPath: [any CodingKey]
    var currentIndex = 0
    var count: Int? { 1 }
    var isAtEnd: Bool { currentIndex > 0 }
    private var element: Blank { Blank(notes: notes, codingPath: codingPath).at(Index()) }

    mutating func decodeNil() -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
      currentIndex += 1
      return try element.blank(type)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type)
      -> KeyedDecodingContainer<NestedKey>
    {
      currentIndex += 1
      return element.container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedDecodingContainer {
      currentIndex += 1
      return element.unkeyedContainer()
    }
    mutating func superDecoder() -> any Decoder {
      currentIndex += 1
      return element
    }
  }

  struct Single: SingleValueDecodingContainer {
    let notes: Notes
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { false }
    func decode<T: Decodable>(_ type: T.Type) throws -> T {
      try Blank(notes: notes, codingPath: codingPath).blank(type)
    }
  }
}
