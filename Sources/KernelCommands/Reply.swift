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
