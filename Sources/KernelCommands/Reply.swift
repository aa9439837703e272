import Api
import Domain
import Foundation

/// Answers for people and for scripts.
public enum Reply {
  /// A one-line answer: `text` for people, or `fields` as one JSON object with `--format json`.
  public static func say(_ invocation: Invocation, _ text: String, _ fields: [String: any Sendable])
    throws
  {
    if invocation.format == .json {
      try Terminal.printExact(try json(fields))
    } else {
      try Terminal.print(text)
    }
  }

  /// `object` (dictionaries, arrays, strings, numbers, booleans) as compact JSON with sorted
  /// keys, written by `JSONEncoder` like every JSON Kernel prints.
  public static func json(_ object: Any) throws -> String {
    try json(encoding: JSONValue(object))
  }

  /// `value` as compact JSON, keys sorted, slashes unescaped, dates as ISO 8601 with
  /// milliseconds in UTC: `JSONMapping.body.encoder()`, the encoder of every JSON Kernel writes.
  public static func json(encoding value: some Encodable) throws -> String {
    String(decoding: try JSONMapping.body.encoder().encode(value), as: UTF8.self)
  }

  /// Prints `{"<key>": [elements…], <fields>}` (keys sorted) and a newline, the list encoded
  /// `slice` elements at a time by `JSONEncoder`: a list of 100,000 entities never exists as one
  /// encoded document (encoding it whole took 180 MB beside a 20 MB answer).
  public static func printJSON<Element: Encodable>(
    list key: String, _ elements: [Element], fields: [String: JSONValue], slice: Int = 1_000
  ) throws {
    let encoder = JSONMapping.body.encoder()
    var members = fields.map { ($0.key, Optional($0.value)) } + [(key, nil)]
    members.sort { $0.0 < $1.0 }
    try Terminal.printPart("{")
    for (index, (name, value)) in members.enumerated() {
      try Terminal.printPart((index > 0 ? "," : "") + (try json(encoding: name)) + ":")
      if let value {
        try Terminal.printPart(try json(encoding: value))
        continue
      }
      try Terminal.printPart("[")
      var start = elements.startIndex
      while start < elements.endIndex {
        let end = min(start + max(1, slice), elements.endIndex)
        let part = String(decoding: try encoder.encode(Array(elements[start..<end])), as: UTF8.self)
        // The slice's own brackets dropped: its elements join the one list.
        try Terminal.printPart(
          (start > elements.startIndex ? "," : "") + part.dropFirst().dropLast())
        start = end
      }
      try Terminal.printPart("]")
    }
    try Terminal.printExact("}")
  }

  /// Rows under a header, columns padded to their widest cell and two spaces apart; the
  /// columns in `rightAligned` aligned right, trailing spaces dropped. Cells are shown as given:
  /// escape what came from outside first (`TerminalText.escaped`).
  public static func table(
    _ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []
  ) -> String {
    let all = [header] + rows
    let widths = header.indices.map { column in
      all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
    }
    return all.map { row in
      var line = row.enumerated().map { column, cell in
        let pad = String(repeating: " ", count: max(0, widths[column] - cell.count))
        return rightAligned.contains(column) ? pad + cell : cell + pad
      }
      .joined(separator: "  ")
      // Not a regular expression: compiling one loaded ICU's, 9% of a `top-grossing` table run.
      while line.last?.isWhitespace == true { line.removeLast() }
      return line
    }
    .joined(separator: "\n")
  }

  /// `1 movie`, `2 movies`, `12,000 movies`: a count with its noun, plural unless it is one
  /// (`plural` for a noun that does not add s).
  public static func count(_ number: Int, _ noun: String, plural: String? = nil) -> String {
    number == 1 ? "1 \(noun)" : "\(grouped(number)) \(plural ?? noun + "s")"
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

  /// An age of `seconds` as whole seconds, from 0 to 10^15: a time another program wrote into a
  /// file may be anything (converting one past Int's range would trap), and one ahead of the
  /// clock (set back since) is 0 old, as an answer's age is, never a negative age.
  public static func wholeSeconds(_ seconds: TimeInterval) -> Int {
    seconds.isFinite ? Int(min(max(seconds, 0), 1e15)) : 0
  }

  /// "12 s old", "3 min old", "5 h old", "2 days old".
  public static func age(_ seconds: TimeInterval) -> String {
    let seconds = TimeInterval(wholeSeconds(seconds))
    return switch seconds {
    case ..<60: "\(Int(seconds)) s old"
    case ..<3600: "\(Int(seconds / 60)) min old"
    case ..<86400: "\(Int(seconds / 3600)) h old"
    default: "\(Int(seconds / 86400)) days old"
    }
  }
}
