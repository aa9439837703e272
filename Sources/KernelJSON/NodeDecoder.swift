import Domain
import Foundation

/// The `Decoder` at one node of a document.
final class NodeDecoder: Decoder, SingleValueDecodingContainer {
  let session: DecodingSession
  /// The node's index, or -1 for a `null` that is not in the document (a missing super key).
  let node: Int
  /// The decoder one level up and the key that led here: the coding path, as a chain that is
  /// only turned into an array when someone asks.
  let parent: NodeDecoder?
  let key: (any CodingKey)?

  init(session: DecodingSession, node: Int, parent: NodeDecoder?, key: (any CodingKey)?) {
    self.session = session
    self.node = node
    self.parent = parent
    self.key = key
  }

  var document: JSONDocument { session.document }
  var userInfo: [CodingUserInfoKey: Any] { session.userInfo }

  var codingPath: [any CodingKey] {
    var keys: [any CodingKey] = []
    var current: NodeDecoder? = self
    while let decoder = current {
      if let key = decoder.key { keys.append(key) }
      current = decoder.parent
    }
    return keys.reversed()
  }

  /// A decoder for the node at `index`, one key further down.
  func child(_ index: Int, key: any CodingKey) -> NodeDecoder {
    NodeDecoder(session: session, node: index, parent: self, key: key)
  }

  var kind: JSONDocument.Kind { node < 0 ? .null : document.nodes[node].kind }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    try expect(.object, for: [String: Any].self)
    return KeyedDecodingContainer(ObjectContainer<Key>(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try expect(.array, for: [Any].self)
    return ArrayContainer(decoder: self)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  /// The decoder at `name` in this object: the errors of `container(keyedBy:)` and
  /// `decode(_:forKey:)` when it is not an object or has no such key.
  func member(_ name: String) throws -> NodeDecoder {
    try expect(.object, for: [String: Any].self)
    return try ObjectContainer<AnyKey>(decoder: self).child(AnyKey(name))
  }

  func expect(_ wanted: JSONDocument.Kind, for type: Any.Type) throws {
    let found = kind
    guard found != wanted else { return }
    if found == .null {
      throw DecodingError.valueNotFound(
        type, .init(codingPath: codingPath, debugDescription: "Found null instead of a value."))
    }
    throw mismatch(type)
  }

  func mismatch(_ type: Any.Type) -> DecodingError {
    let names: [JSONDocument.Kind: String] = [
      .null: "null", .false: "a boolean", .true: "a boolean", .number: "a number",
      .string: "a string", .array: "an array", .object: "an object",
    ]
    return DecodingError.typeMismatch(
      type,
      .init(
        codingPath: codingPath,
        debugDescription:
          "Expected to decode \(type) but found \(names[kind] ?? "a value") instead."
      ))
  }

  func corrupted(_ description: String) -> DecodingError {
    DecodingError.dataCorrupted(.init(codingPath: codingPath, debugDescription: description))
  }

  // MARK: Single values

  func decodeNil() -> Bool { kind == .null }

  func decode(_ type: Bool.Type) throws -> Bool {
    switch kind {
    case .true: return true
    case .false: return false
    default:
      try expect(.true, for: type)
      return false
    }
  }

  func decode(_ type: String.Type) throws -> String {
    try expect(.string, for: type)
    return document.string(at: node)
  }

  func decode(_ type: Double.Type) throws -> Double {
    try expect(.number, for: type)
    guard let value = document.double(at: node) else {
      throw corrupted("Number \(document.numberText(at: node)) does not fit in Double.")
    }
    return value
  }

  func decode(_ type: Float.Type) throws -> Float {
    let value = try decode(Double.self)
    guard let narrowed = Float(document.numberText(at: node)), narrowed.isFinite else {
      throw corrupted("Number \(value) does not fit in Float.")
    }
    return narrowed
  }

  func decodeInteger<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    try expect(.number, for: type)
    guard let value = document.integer(T.self, at: node) else {
      throw corrupted("Number \(document.numberText(at: node)) does not fit in \(T.self).")
    }
    return value
  }

  func decode(_ type: Int.Type) throws -> Int { try decodeInteger(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decodeInteger(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decodeInteger(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decodeInteger(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decodeInteger(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decodeInteger(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decodeInteger(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decodeInteger(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decodeInteger(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decodeInteger(type) }

  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }

  /// A `T` at this node; the few Foundation types `JSONDecoder` treats specially are treated
  /// the same way here.
  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    let type = ObjectIdentifier(T.self)
    if type == ObjectIdentifier(Date.self) || type == ObjectIdentifier(URL.self)
      || type == ObjectIdentifier(Data.self) || type == ObjectIdentifier(Decimal.self)
    {
      return try decodeFoundationValue(T.self)
    }
    if node >= 0, document.nodes[node].kind == .array, T.self is any DecodableArray.Type {
      return try decodeArray(T.self)
    }
    return try T(from: self)
  }

  /// An array type's value, element by element.
  @inline(never)
  private func decodeArray<T: Decodable>(_ type: T.Type) throws -> T {
    guard let arrayType = T.self as? any DecodableArray.Type,
      let array = try arrayType.decodeElements(from: self) as? T
    else { return try T(from: self) }
    return array
  }

  /// Kept apart so that the casts it needs cost nothing to the values that are not these types.
  @inline(never)
  private func decodeFoundationValue<T: Decodable>(_ type: T.Type) throws -> T {
    if type == Date.self, let date = try decodeDate() as? T { return date }
    if type == URL.self {
      let text = try decode(String.self)
      guard let url = URL(string: text) as? T else { throw corrupted("Invalid URL string.") }
      return url
    }
    if type == Data.self {
      let text = try decode(String.self)
      guard let data = Data(base64Encoded: text) as? T else {
        throw corrupted("Encountered Data is not valid Base64.")
      }
      return data
    }
    try expect(.number, for: type)
    guard let decimal = Decimal(string: document.numberText(at: node)) as? T else {
      throw corrupted("Number \(document.numberText(at: node)) does not fit in Decimal.")
    }
    return decimal
  }

  private func decodeDate() throws -> Date {
    switch session.dateDecoding {
    case .deferredToDate:
      return try Date(from: self)
    case .secondsSince1970:
      return Date(timeIntervalSince1970: try decode(Double.self))
    case .day:
      let text = try decode(String.self)
      guard let date = CalendarDay.date(from: text) else {
        throw corrupted("expected a day as yyyy-MM-dd, found \"\(text)\"")
      }
      return date
    case .custom(let decode):
      return try decode(self)
    }
  }
}

/// Arrays decoded straight from the document's nodes, their storage sized once, instead of
/// through an unkeyed container; the values and errors are the same.
private protocol DecodableArray {
  static func decodeElements(from decoder: NodeDecoder) throws -> Self
}

extension Array: DecodableArray where Element: Decodable {
  static func decodeElements(from decoder: NodeDecoder) throws -> [Element] {
    let document = decoder.document
    let count = document.nodes[decoder.node].start
    var elements: [Element] = []
    elements.reserveCapacity(count)
    var next = decoder.node + 1
    for index in 0..<count {
      elements.append(try decoder.child(next, key: IndexKey(index)).decodeValue(Element.self))
      next = document.after(next)
    }
    return elements
  }
}

/// A value in a body being decoded, for the api's key paths and envelopes (`JSONMapping`).
package struct JSONNode {
  let decoder: NodeDecoder

  package func container<Key: CodingKey>(keyedBy type: Key.Type) throws
    -> KeyedDecodingContainer<Key>
  {
    try decoder.container(keyedBy: type)
  }

  /// The value at `name` in this object, with the errors `decode(_:forKey:)` would give.
  package func member(_ name: String) throws -> JSONNode {
    JSONNode(decoder: try decoder.member(name))
  }

  package func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try decoder.decodeValue(type)
  }
}
