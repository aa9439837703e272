import Foundation

/// A parsed JSON body as a flat list of nodes in document order ("a tape"): one pass over the
/// bytes, one array, no dictionaries. Strings and numbers stay as byte ranges until a decoder
/// asks for them, so a field nobody reads costs nothing but its scan.
final class JSONDocument {
  /// What a node is. Containers record how many members they have and where their subtree ends.
  enum Kind: UInt8 {
    case null, `false`, `true`, number, string, array, object
  }

  struct Node {
    var kind: Kind
    /// A string with a backslash in it; a number with a fraction or an exponent.
    var flag: Bool
    /// Strings and numbers: the first byte (after the quote). Containers: their member count.
    var start: Int
    /// Strings and numbers: the length in bytes. Containers: the index after their subtree.
    var length: Int
  }

  /// How deep arrays and objects may nest, as in Foundation's decoder.
  static let maximumDepth = 512

  let bytes: [UInt8]
  let nodes: [Node]

  /// Parses `data`, or throws a `JSONSyntaxError` naming the first offending byte.
  init(parsing data: Data) throws {
    bytes = [UInt8](data)
    if bytes.contains(where: { $0 >= 0x80 }), String(validating: bytes, as: UTF8.self) == nil {
      throw JSONSyntaxError(offset: 0, reason: "the body is not UTF-8")
    }
    var parser = Parser(bytes: bytes)
    parser.nodes.reserveCapacity(max(16, bytes.count / 6))
    try parser.document()
    nodes = parser.nodes
  }

  /// The bytes of the string or number at `index`.
  @inline(__always) private func text(at index: Int) -> ArraySlice<UInt8> {
    let node = nodes[index]
    return bytes[node.start..<(node.start + node.length)]
  }

  /// The index after `index`'s subtree: the next sibling.
  @inline(__always) func after(_ index: Int) -> Int {
    let node = nodes[index]
    return node.kind == .array || node.kind == .object ? node.length : index + 1
  }

  /// The text of the string at `index`, escapes resolved.
  func string(at index: Int) -> String {
    guard nodes[index].flag else { return String(decoding: text(at: index), as: UTF8.self) }
    return Self.unescape(text(at: index))
  }

  /// Whether the string at `index` is exactly `key`, compared byte for byte when it has no
  /// escapes.
  @inline(__always) func string(at index: Int, equals key: String) -> Bool {
    let node = nodes[index]
    guard !node.flag else { return string(at: index) == key }
    var key = key
    return key.withUTF8 { utf8 in
      guard utf8.count == node.length else { return false }
      return bytes.withUnsafeBufferPointer { all in
        guard let base = all.baseAddress, let other = utf8.baseAddress else { return true }
        return memcmp(base + node.start, other, node.length) == 0
      }
    }
  }

  /// The bytes of the number at `index`, as written.
  func numberText(at index: Int) -> String { String(decoding: text(at: index), as: UTF8.self) }

  /// Resolves the escapes of an already validated string.
  private static func unescape(_ raw: ArraySlice<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(raw.count)
    var index = raw.startIndex
    while index < raw.endIndex {
      let byte = raw[index]
      guard byte == UInt8(ascii: "\\") else {
        out.append(byte)
        index += 1
        continue
      }
      let escape = raw[index + 1]
      index += 2
      switch escape {
      case UInt8(ascii: "b"): out.append(0x08)
      case UInt8(ascii: "f"): out.append(0x0C)
      case UInt8(ascii: "n"): out.append(0x0A)
      case UInt8(ascii: "r"): out.append(0x0D)
      case UInt8(ascii: "t"): out.append(0x09)
      case UInt8(ascii: "u"):
        var scalar = UInt32(hex4(raw, index))
        index += 4
        if (0xD800..<0xDC00).contains(scalar) {
          scalar = 0x10000 + ((scalar - 0xD800) << 10) + (UInt32(hex4(raw, index + 2)) - 0xDC00)
          index += 6
        }
        if let unicode = Unicode.Scalar(scalar) {
          out.append(contentsOf: Array(String(unicode).utf8))
        }
      default: out.append(escape)
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// The value of four hex digits the parser checked.
  private static func hex4(_ raw: ArraySlice<UInt8>, _ at: Int) -> UInt16 {
    var value: UInt16 = 0
    for byte in raw[at..<(at + 4)] { value = value << 4 | UInt16(hexValue(byte) ?? 0) }
    return value
  }

  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}

/// Why a body is not JSON, at which byte: the underlying error of `JSONBodyDecoder`'s
/// `DecodingError.dataCorrupted`.
public struct JSONSyntaxError: Error, Sendable, CustomStringConvertible {
  /// The offending byte's offset from the start of the body.
  public let offset: Int
  /// What was wrong there, e.g. "expected a comma or ]".
  public let reason: String

  public var description: String { "\(reason) (at byte \(offset))" }
}
