import Foundation

/// An object's members, found by comparing each key's bytes; the first of duplicate keys wins,
/// as in `JSONDecoder`. Large objects get an index on first use instead of a scan per key.
struct ObjectContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: NodeDecoder
  private let index: [String: Int]?

  /// Objects with more members than this are indexed rather than scanned.
  private static var scanLimit: Int { 16 }

  init(decoder: NodeDecoder) {
    self.decoder = decoder
    let document = decoder.document
    let object = document.nodes[decoder.node]
    guard object.start > Self.scanLimit else {
      index = nil
      return
    }
    var index: [String: Int] = [:]
    index.reserveCapacity(object.start)
    var member = decoder.node + 1
    while member < object.length {
      let name = document.string(at: member)
      if index[name] == nil { index[name] = member + 1 }
      member = document.after(member + 1)
    }
    self.index = index
  }

  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] {
    let document = decoder.document
    var seen = Set<String>()
    var keys: [Key] = []
    var member = decoder.node + 1
    while member < document.nodes[decoder.node].length {
      let name = document.string(at: member)
      if seen.insert(name).inserted, let key = Key(stringValue: name) { keys.append(key) }
      member = document.after(member + 1)
    }
    return keys
  }

  /// The node index of `key`'s value, if the object has it.
  private func value(of key: Key) -> Int? {
    if let index { return index[key.stringValue] }
    let document = decoder.document
    let name = key.stringValue
    var member = decoder.node + 1
    let end = document.nodes[decoder.node].length
    while member < end {
      if document.string(at: member, equals: name) { return member + 1 }
      member = document.after(member + 1)
    }
    return nil
  }

  func child(_ key: Key) throws -> NodeDecoder {
    guard let found = value(of: key) else {
      throw DecodingError.keyNotFound(
        key,
        .init(
          codingPath: codingPath,
          debugDescription: "No value associated with key \"\(key.stringValue)\"."))
    }
    return decoder.child(found, key: key)
  }

  func contains(_ key: Key) -> Bool { value(of: key) != nil }

  func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }

  /// A value read straight from the document when it has the wanted kind; otherwise the
  /// child decoder's answer, which is the error naming the field.
  @inline(__always) private func primitive<T>(
    _ key: Key, _ read: (JSONDocument, Int) -> T?, _ slow: (NodeDecoder) throws -> T
  ) throws -> T {
    if let found = value(of: key), let value = read(decoder.document, found) { return value }
    return try slow(try child(key))
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    try primitive(key, { $0.plainBool(at: $1) }, { try $0.decode(type) })
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    try primitive(key, { $0.plainString(at: $1) }, { try $0.decode(type) })
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try primitive(key, { $0.plainDouble(at: $1) }, { try $0.decode(type) })
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).decode(type) }
  private func integer<T: FixedWidthInteger>(_ type: T.Type, forKey key: Key) throws -> T {
    try primitive(key, { $0.plainInteger(T.self, at: $1) }, { try $0.decodeInteger(type) })
  }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
    try primitive(key, { $0.plainInt(at: $1) }, { try $0.decodeInteger(type) })
  }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, forKey: key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
    try integer(type, forKey: key)
  }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
    try integer(type, forKey: key)
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    try integer(type, forKey: key)
  }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, forKey: key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
    try integer(type, forKey: key)
  }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
    try integer(type, forKey: key)
  }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
    try integer(type, forKey: key)
  }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
    try integer(type, forKey: key)
  }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try child(key).decodeValue(type)
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let found = value(of: key), decoder.document.nodes[found].kind != .null else {
      return nil
    }
    return try decoder.child(found, key: key).decodeValue(type)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try child(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try child(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    decoder.child(value(of: "super") ?? -1, key: SuperKey())
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    decoder.child(value(of: key) ?? -1, key: key)
  }

  private func value(of name: String) -> Int? {
    Key(stringValue: name).flatMap { value(of: $0) }
  }
}

/// The key `superDecoder()` reads.
private struct SuperKey: CodingKey {
  var stringValue: String { "super" }
  var intValue: Int? { nil }
  init() {}
  init?(stringValue: String) { nil }
  init?(intValue: Int) { nil }
}

/// An array's elements in order.
struct ArrayContainer: UnkeyedDecodingContainer {
  let decoder: NodeDecoder
  let count: Int?
  private(set) var currentIndex = 0
  private var next: Int

  init(decoder: NodeDecoder) {
    self.decoder = decoder
    count = decoder.document.nodes[decoder.node].start
    next = decoder.node + 1
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var isAtEnd: Bool { currentIndex >= (count ?? 0) }

  /// The decoder of the next element, moving past it.
  private mutating func element(_ type: Any.Type) throws -> NodeDecoder {
    guard !isAtEnd else {
      throw DecodingError.valueNotFound(
        type,
        .init(
          codingPath: codingPath + [IndexKey(currentIndex)],
          debugDescription: "Unkeyed container is at end."))
    }
    let element = decoder.child(next, key: IndexKey(currentIndex))
    next = decoder.document.after(next)
    currentIndex += 1
    return element
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, decoder.document.nodes[next].kind == .null else { return false }
    next += 1
    currentIndex += 1
    return true
  }

  /// The next element read straight from the document when it has the wanted kind; otherwise
  /// its decoder's answer, which is the error naming the element.
  @inline(__always) private mutating func primitive<T>(
    _ type: Any.Type, _ read: (JSONDocument, Int) -> T?, _ slow: (NodeDecoder) throws -> T
  ) throws -> T {
    if !isAtEnd, let value = read(decoder.document, next) {
      next += 1
      currentIndex += 1
      return value
    }
    return try slow(try element(type))
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    try primitive(type, { $0.plainBool(at: $1) }, { try $0.decode(type) })
  }
  mutating func decode(_ type: String.Type) throws -> String {
    try primitive(type, { $0.plainString(at: $1) }, { try $0.decode(type) })
  }
  mutating func decode(_ type: Double.Type) throws -> Double {
    try primitive(type, { $0.plainDouble(at: $1) }, { try $0.decode(type) })
  }
  mutating func decode(_ type: Float.Type) throws -> Float { try element(type).decode(type) }
  private mutating func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
    try primitive(type, { $0.plainInteger(T.self, at: $1) }, { try $0.decodeInteger(type) })
  }
  mutating func decode(_ type: Int.Type) throws -> Int {
    try primitive(type, { $0.plainInt(at: $1) }, { try $0.decodeInteger(type) })
  }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try element(type).decodeValue(type)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type
  ) throws -> KeyedDecodingContainer<NestedKey> {
    try element([String: Any].self).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    try element([Any].self).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder { try element(Any.self) }
}
