import Foundation
import Synchronization

/// The fields a `Decodable` type's JSON has, as its own decoding asks for them: its coding
/// keys, and those of the values it holds, as key paths (`cast.*.name`, `*` for any index). Found
/// once per type by decoding it from a decoder that answers every question with a blank value
/// and notes each key asked, so a local query's field is checked against the type, not against
/// what happens to be stored (`LocalQuery.unknownFields`).
enum FieldNames {
  /// What a blank decoding of a type finds: its fields, and the field each marked leaf of the
  /// blank value came from (the same each time: a type decodes its fields in one order).
  private struct Found: Sendable {
    let paths: Set<String>
    let marks: [String: String]
    let flags: [String]
  }

  private static let found = Mutex<[ObjectIdentifier: Found?]>([:])
  /// The field each key path named, found once: a call made for each request names its
  /// fields again. Keyed by the key path itself (its root type and steps), not its text:
  /// printing a key path cost a tenth of a command's start.
  private static let named = Mutex<[Named: String?]>([:])

  /// A key path as `named` keeps it. Unchecked: a key path is an immutable object, hashed and
  /// compared by its root type and steps.
  private struct Named: Hashable, @unchecked Sendable {
    let keyPath: AnyKeyPath
  }

  /// What a blank decoding of `type` finds, found once; nil when its decoding could not be
  /// followed to its end.
  private static func fields<T: Decodable>(of type: T.Type) -> Found? {
    let id = ObjectIdentifier(type)
    if let known = found.withLock({ $0[id] }) { return known }
    let notes = Notes()
    let made = (try? T(from: Blank(notes: notes, codingPath: []))).map { _ in
      Found(paths: notes.paths, marks: notes.marks, flags: notes.flags)
    }
    found.withLock { $0[id] = .some(made) }
    return made
  }

  /// The key paths of `type`'s fields; nil when its decoding could not be followed to its end
  /// (a custom `init(from:)` that refuses a blank value), and then nothing is refused.
  static func of<T: Decodable>(_ type: T.Type) -> Set<String>? { fields(of: type)?.paths }

  /// The field of `Root`'s JSON that `keyPath` reads (`\Movie.year`: `year`, its coding key):
  /// each leaf of the blank value holds a number or text of its own, so the value the key path
  /// reads says which field it came from; a flag is found by decoding a blank with each flag
  /// set in turn. Nil for a list or an object.
  static func name<Root: Decodable, Value>(of keyPath: KeyPath<Root, Value>) -> String? {
    let key = Named(keyPath: keyPath)
    if let known = named.withLock({ $0[key] }) { return known }
    let name = find(keyPath)
    named.withLock { $0[key] = .some(name) }
    return name
  }

  /// `name(of:)`, found anew.
  private static func find<Root: Decodable, Value>(_ keyPath: KeyPath<Root, Value>) -> String? {
    guard let found = fields(of: Root.self),
      let root = try? Root(from: Blank(notes: Notes(), codingPath: []))
    else { return nil }
    let value = root[keyPath: keyPath]
    guard flag(value) != nil else { return Self.mark(of: value).flatMap { found.marks[$0] } }
    return found.flags.indices.first { index in
      let notes = Notes()
      notes.setFlag = index
      let set = try? Root(from: Blank(notes: notes, codingPath: []))
      return set.flatMap { flag($0[keyPath: keyPath]) } == true
    }.map { found.flags[$0] }
  }

  /// `value` as a flag, unwrapping an optional; nil when it is not one.
  private static func flag(_ value: Any) -> Bool? {
    if let flag = value as? Bool { return flag }
    return (value as? any Wrapping)?.wrapped.flatMap(flag)
  }

  /// The text a marked leaf is noted under, unwrapping an optional.
  private static func mark(of value: Any) -> String? {
    switch value {
    case let text as String: return text
    case let number as any BinaryInteger: return "\(number)"
    case let number as Double: return "\(number)"
    case let number as Float: return "\(Double(number))"
    case let date as Date: return "\(date.timeIntervalSinceReferenceDate)"
    default: return (value as? any Wrapping)?.wrapped.flatMap(mark)
    }
  }

  /// `field` (`cast.0.name`) as `of` writes it: an index as `*`.
  static func normalized(_ field: String) -> String {
    LocalQuery.path(field).map { Int($0) == nil ? $0 : "*" }.joined(separator: ".")
  }

  /// The key paths asked for so far, and the leaves marked. Used by one decoding on one
  /// thread.
  final class Notes {
    var paths: Set<String> = []
    var marks: [String: String] = [:]
    var leaves = 0
    var depth = 0
    /// The paths of the flags, in the order they are decoded.
    var flags: [String] = []
    /// The flag decoded as `true` (its index in `flags`); every other is `false`.
    var setFlag: Int?
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

    /// A blank value of `type`: a number or text of its own for each leaf (noted with its
    /// path), `false` for a flag, else one decoded from a blank decoder, 32 levels deep at most
    /// (a type that holds itself).
    func blank<T: Decodable>(_ type: T.Type) throws -> T {
      notes.leaves += 1
      // Far from any count or id a blank of 0 would meet, and exact in a Float.
      let number = 7_000_000 + notes.leaves
      let path = codingPath.map(\.stringValue).joined(separator: ".")
      func marked<U>(_ value: U, _ mark: String) throws -> T {
        notes.marks[mark] = path
        return try cast(value)
      }
      switch type {
      case is String.Type: return try marked("\u{1}\(number)", "\u{1}\(number)")
      case is Bool.Type:
        notes.flags.append(path)
        return try cast(notes.flags.count - 1 == notes.setFlag)
      case let integer as any FixedWidthInteger.Type:
        // A type too narrow for a mark of its own is a field all the same, unmarked.
        guard let value = integer.init(exactly: number) else {
          return try cast(integer.init(exactly: 0) as Any)
        }
        return try marked(value, "\(value)")
      case is Double.Type: return try marked(Double(number) + 0.5, "\(Double(number) + 0.5)")
      case is Float.Type: return try marked(Float(number) + 0.5, "\(Double(number) + 0.5)")
      default:
        notes.depth += 1
        defer { notes.depth -= 1 }
        guard notes.depth < 32 else {
          throw DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: "deep"))
        }
        return try T(from: self)
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

/// An optional's value, if any, without its static type: what a key path read from a blank
/// value holds (a `Mirror` of each value cost more than the rest of naming the field).
private protocol Wrapping {
  var wrapped: Any? { get }
}

extension Optional: Wrapping {
  fileprivate var wrapped: Any? { map { $0 } }
}
