import Foundation

/// Answers for people and for scripts.
public enum Reply {
  /// A one-line answer: `text` for people, or `fields` as one JSON object with `--format json`.
  public static func say(_ session: Session, _ text: String, _ fields: [String: any Sendable])
    throws
  {
    if session.format == .json {
      Terminal.printExact(try json(fields))
    } else {
      Terminal.print(text)
    }
  }

  /// `object` (dictionaries, arrays, strings, numbers) as compact JSON with sorted keys.
  public static func json(_ object: Any) throws -> String {
    let data = try JSONSerialization.data(
      withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
  }

  /// `value` as compact JSON, slashes unescaped.
  public static func json(encoding value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
  }

  /// `text` as a JSON string literal, quotes included: `"`, `\` and the control characters
  /// escaped as JSONEncoder escapes them (`\n`, `\t`, `\u001b`, …), slashes and every other
  /// character kept. For an app that writes its JSON in a fixed key order: no encoder is made.
  public static func quoted(_ text: String) -> String {
    var out = [UInt8]()
    out.reserveCapacity(text.utf8.count + 2)
    out.append(UInt8(ascii: "\""))
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
      case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
      case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
      case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
      case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
      case 0x08: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
      case 0x0C: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
      case 0x00..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        out.append(contentsOf: Array("\\u00".utf8))
        out.append(hex[Int(byte >> 4)])
        out.append(hex[Int(byte & 0x0F)])
      default: out.append(byte)
      }
    }
    out.append(UInt8(ascii: "\""))
    return String(decoding: out, as: UTF8.self)
  }

  /// `486295561` → `486,295,561`, the same in every locale.
  public static func grouped(_ number: Int) -> String {
    let digits = Array(String(number.magnitude))
    var out = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
      out.append(digit)
    }
    return number < 0 ? "-" + out : out
  }

  /// "12 s old", "3 min old", "5 h old", "2 days old".
  public static func age(_ seconds: TimeInterval) -> String {
    switch seconds {
    case ..<60: "\(Int(seconds)) s old"
    case ..<3600: "\(Int(seconds / 60)) min old"
    case ..<86400: "\(Int(seconds / 3600)) h old"
    default: "\(Int(seconds / 86400)) days old"
    }
  }
}
