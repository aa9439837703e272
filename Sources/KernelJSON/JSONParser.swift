import Foundation

/// RFC 8259's grammar, recursive with a depth limit, writing nodes as it goes.
struct Parser {
  let bytes: [UInt8]
  var nodes: [JSONDocument.Node] = []
  var index = 0
  var depth = 0

  mutating func document() throws {
    // A UTF-8 byte order mark is skipped, as Foundation's decoder skips it.
    if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    skipSpace()
    try value()
    skipSpace()
    if index < bytes.count { throw failure("more follows the value") }
  }

  private func failure(_ reason: String) -> JSONSyntaxError {
    JSONSyntaxError(
      offset: index, reason: index >= bytes.count ? "the body ends too soon" : reason)
  }

  @inline(__always) private mutating func skipSpace() {
    while index < bytes.count {
      switch bytes[index] {
      case 0x20, 0x0A, 0x0D, 0x09: index += 1
      default: return
      }
    }
  }

  private mutating func value() throws {
    guard index < bytes.count else { throw failure("") }
    switch bytes[index] {
    case UInt8(ascii: "{"): try object()
    case UInt8(ascii: "["): try array()
    case UInt8(ascii: "\""): try string()
    case UInt8(ascii: "t"): try literal("true", .true)
    case UInt8(ascii: "f"): try literal("false", .false)
    case UInt8(ascii: "n"): try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
    default: throw failure("expected a value")
    }
  }

  private mutating func literal(_ word: StaticString, _ kind: JSONDocument.Kind) throws {
    let count = word.utf8CodeUnitCount
    guard index + count <= bytes.count else { throw failure("") }
    for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
      throw failure("expected \(word)")
    }
    nodes.append(.init(kind: kind, flag: false, start: index, length: count))
    index += count
  }

  private mutating func container(_ kind: JSONDocument.Kind, close: UInt8) throws {
    depth += 1
    guard depth <= JSONDocument.maximumDepth else {
      throw failure("arrays and objects nest deeper than \(JSONDocument.maximumDepth)")
    }
    let slot = nodes.count
    nodes.append(.init(kind: kind, flag: false, start: 0, length: 0))
    index += 1
    skipSpace()
    var count = 0
    if index < bytes.count, bytes[index] == close {
      index += 1
    } else {
      while true {
        if kind == .object {
          guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
            throw failure("expected a key in quotes")
          }
          try string()
          skipSpace()
          guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
            throw failure("expected a colon after the key")
          }
          index += 1
          skipSpace()
        }
        try value()
        count += 1
        skipSpace()
        guard index < bytes.count else { throw failure("") }
        if bytes[index] == UInt8(ascii: ",") {
          index += 1
          skipSpace()
          // A comma before the closing bracket is let pass, as Foundation's decoder lets it.
          if index < bytes.count, bytes[index] == close {
            index += 1
            break
          }
        } else if bytes[index] == close {
          index += 1
          break
        } else {
          throw failure(kind == .object ? "expected a comma or }" : "expected a comma or ]")
        }
      }
    }
    nodes[slot].start = count
    nodes[slot].length = nodes.count
    depth -= 1
  }

  private mutating func object() throws { try container(.object, close: UInt8(ascii: "}")) }
  private mutating func array() throws { try container(.array, close: UInt8(ascii: "]")) }

  private mutating func string() throws {
    index += 1
    let start = index
    var escaped = false
    while true {
      guard index < bytes.count else { throw failure("") }
      let byte = bytes[index]
      if byte == UInt8(ascii: "\"") { break }
      if byte < 0x20 { throw failure("a control character is not escaped in a string") }
      if byte == UInt8(ascii: "\\") {
        escaped = true
        try escape()
      } else {
        index += 1
      }
    }
    nodes.append(.init(kind: .string, flag: escaped, start: start, length: index - start))
    index += 1
  }

  /// Checks one escape: a known letter, or `\u` with four hex digits, surrogates paired.
  private mutating func escape() throws {
    index += 1
    guard index < bytes.count else { throw failure("") }
    switch bytes[index] {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
      UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
      index += 1
    case UInt8(ascii: "u"):
      let unit = try hex4(at: index + 1)
      index += 5
      if (0xDC00..<0xE000).contains(unit) { throw failure("a low surrogate comes alone") }
      if (0xD800..<0xDC00).contains(unit) {
        guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
          bytes[index + 1] == UInt8(ascii: "u"),
          (0xDC00..<0xE000).contains(try hex4(at: index + 2))
        else { throw failure("a high surrogate is not followed by a low one") }
        index += 6
      }
    default: throw failure("an unknown escape")
    }
  }

  private func hex4(at start: Int) throws -> UInt16 {
    guard start + 4 <= bytes.count else { throw failure("") }
    var value: UInt16 = 0
    for byte in bytes[start..<(start + 4)] {
      guard let digit = JSONDocument.hexValue(byte) else {
        throw JSONSyntaxError(offset: start, reason: "\\u needs four hex digits")
      }
      value = value << 4 | UInt16(digit)
    }
    return value
  }

  private mutating func number() throws {
    let start = index
    var fraction = false
    if bytes[index] == UInt8(ascii: "-") { index += 1 }
    guard index < bytes.count else { throw failure("") }
    if bytes[index] == UInt8(ascii: "0") {
      index += 1
    } else {
      guard digits() > 0 else { throw failure("expected a digit") }
    }
    if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
      index += 1
      fraction = true
      guard digits() > 0 else { throw failure("expected a digit after the point") }
    }
    if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
      index += 1
      fraction = true
      if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-")
      {
        index += 1
      }
      guard digits() > 0 else { throw failure("expected a digit in the exponent") }
    }
    nodes.append(.init(kind: .number, flag: fraction, start: start, length: index - start))
  }

  private mutating func digits() -> Int {
    let start = index
    while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
      index += 1
    }
    return index - start
  }
}
