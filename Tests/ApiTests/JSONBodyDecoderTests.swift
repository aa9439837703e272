import Api
import Foundation
import Testing

/// Kernel's decoder against Foundation's on the same bytes: the same values, and the same
/// refusals at the same fields.
@Suite struct JSONBodyDecoderTests {
  private struct Everything: Codable, Equatable {
    enum Genre: String, Codable { case drama, comedy }
    struct Inner: Codable, Equatable {
      let name: String
      let tags: [String]
    }
    let flag: Bool
    let text: String
    let real: Double
    let single: Float
    let count: Int
    let small: Int8
    let big: UInt64
    let maybe: Int?
    let absent: String?
    let grid: [[Int]]
    let table: [String: Int]
    let genre: Genre
    let inner: Inner
    let inners: [Inner]
    let link: URL
    let blob: Data
    let money: Decimal
    let when: Date
  }

  private static let everything = """
    {"flag": true, "text": "caf\\u00e9 \\ud83d\\ude00 \\"q\\" \\\\ \\/ \\n\\t", "real": -12.5e-3,
     "single": 1.25, "count": -42, "small": 127, "big": 18446744073709551615, "maybe": null,
     "grid": [[1, 2], [], [3]], "table": {"a": 1, "b": 2}, "genre": "comedy",
     "inner": {"name": "x", "tags": ["p", "q"]}, "inners": [{"name": "y", "tags": []}],
     "link": "https://example.com/a?b=c", "blob": "aGVsbG8=", "money": 12.345,
     "when": 1481846400, "ignored": {"deep": [1, {"x": null}]}}
    """

  private func ours<T: Decodable>(_ type: T.Type, _ json: String) -> Result<T, any Error> {
    Result {
      try JSONBodyDecoder(dateDecoding: .secondsSince1970).decode(T.self, from: Data(json.utf8))
    }
  }

  private func foundation<T: Decodable>(_ type: T.Type, _ json: String) -> Result<T, any Error> {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .secondsSince1970
    return Result { try decoder.decode(T.self, from: Data(json.utf8)) }
  }

  /// The kind of a decoding error and the path it names, as JSONMapping writes paths.
  private func shape(_ error: any Error) -> String {
    switch error as? DecodingError {
    case .typeMismatch(_, let context): "typeMismatch at \(path(context.codingPath))"
    case .valueNotFound(_, let context): "valueNotFound at \(path(context.codingPath))"
    case .keyNotFound(let key, let context):
      "keyNotFound at \(path(context.codingPath + [key]))"
    case .dataCorrupted(let context):
      "dataCorrupted at \(path(context.codingPath))"
    default: "\(type(of: error))"
    }
  }

  private func path(_ keys: [any CodingKey]) -> String {
    keys.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
  }

  @Test func everyKindOfValueDecodesAsFoundationDecodesIt() throws {
    let value = try ours(Everything.self, Self.everything).get()
    #expect(value == (try foundation(Everything.self, Self.everything).get()))
    #expect(value.text == "café 😀 \"q\" \\ / \n\t")
    #expect(value.big == UInt64.max)
    #expect(value.maybe == nil && value.absent == nil)
  }

  @Test(arguments: [
    "0", "-0", "0.1", "1e22", "1e23", "-12.5e-3", "123456789012345678", "9007199254740993",
    "2.2250738585072014e-308", "1.7976931348623157e308", "4.9e-324", "0.30000000000000004",
    "1.5E+5", "100000000000000000000000", "3.141592653589793238462643383279",
  ])
  func numbersAreTheNearestDoubleFoundationFinds(number: String) throws {
    let value = try ours(Double.self, number).get()
    let expected = try foundation(Double.self, number).get()
    #expect(value.bitPattern == expected.bitPattern)
  }

  @Test(arguments: [
    ("1e2", "100"), ("2.0", "2"), ("-9223372036854775808", "-9223372036854775808"),
  ])
  func wholeNumbersInAnyNotationAreIntegers(number: String, expected: String) throws {
    #expect(try ours(Int.self, number).get() == Int(expected))
    #expect(try foundation(Int.self, number).get() == Int(expected))
  }

  @Test(arguments: [
    "", "[1, 2", "{\"a\" 1}", "[01]", "[+1]", "[1.]", "[.5]", "[1e]", "[-]", "[1,,2]", "[,1]",
    "[NaN]", "[1]x", "\"a\tb\"", "\"\\udc00\"", "\"\\ud800\"", "\"\\x\"", "[tru]", "nul",
  ])
  func bodiesThatAreNotJSONAreRefusedWhole(json: String) {
    // Foundation reads lazily and may first find the wrong type; ours reads the body first,
    // so what is not JSON is said to be not JSON.
    guard case .failure(let error) = ours(Everything.self, json),
      case .dataCorrupted(let context) = error as? DecodingError,
      context.codingPath.isEmpty, context.underlyingError is JSONSyntaxError
    else {
      Issue.record("expected \(json) to be refused as not JSON")
      return
    }
    #expect(throws: (any Error).self) { try foundation(Everything.self, json).get() }
  }

  @Test(arguments: [
    "[]", "null", "{}",
    Self.everything.replacingOccurrences(of: "\"flag\": true", with: "\"flag\": 1"),
    Self.everything.replacingOccurrences(of: "\"text\": ", with: "\"text\": null, \"x\": "),
    Self.everything.replacingOccurrences(
      of: "\"tags\": [\"p\", \"q\"]", with: "\"tags\": [\"p\", 7]"),
    Self.everything.replacingOccurrences(
      of: "\"genre\": \"comedy\"", with: "\"genre\": \"horror\""),
    Self.everything.replacingOccurrences(of: "\"blob\": \"aGVsbG8=\"", with: "\"blob\": \"!\""),
    Self.everything.replacingOccurrences(of: "[[1, 2], [], [3]]", with: "[[1, 2], {}, [3]]"),
    Self.everything.replacingOccurrences(
      of: "\"inners\": [", with: "\"inners\": [{\"tags\": []}, "),
  ])
  func refusalsAreFoundationsRefusalsAtTheSameField(json: String) {
    let mine = ours(Everything.self, json)
    let theirs = foundation(Everything.self, json)
    guard case .failure(let myError) = mine, case .failure(let theirError) = theirs else {
      Issue.record("expected both to refuse \(json): ours \(mine), Foundation's \(theirs)")
      return
    }
    #expect(shape(myError) == shape(theirError))
  }

  @Test(arguments: [
    ("\"small\": 127", "\"small\": 128", "small"), ("\"big\": 1", "\"big\": -1", "big"),
    ("\"count\": -42", "\"count\": 1.5", "count"),
  ])
  func numbersThatDoNotFitAreNamedAtTheirField(field: String, replacement: String, key: String) {
    // Foundation refuses these too, but at the top of the body; ours names the field.
    let json = Self.everything.replacingOccurrences(of: field, with: replacement)
    guard case .failure(let error) = ours(Everything.self, json),
      case .dataCorrupted(let context) = error as? DecodingError
    else {
      Issue.record("expected \(replacement) to be refused")
      return
    }
    #expect(path(context.codingPath) == ".\(key)")
    #expect(context.debugDescription.contains("does not fit"))
    #expect(throws: (any Error).self) { try foundation(Everything.self, json).get() }
  }

  @Test func leniencyIsFoundationsLeniency() throws {
    // A trailing comma and a byte order mark pass in both; of duplicate keys the first wins.
    for json in ["[1, 2,]", "\u{FEFF}[1, 2]", " \n[1, 2] \t"] {
      #expect(try ours([Int].self, json).get() == [1, 2])
      #expect(try foundation([Int].self, json).get() == [1, 2])
    }
    let duplicated = "{\"a\": 1, \"a\": 2, \"b\": 3,}"
    #expect(
      try ours([String: Int].self, duplicated).get()
        == foundation([String: Int].self, duplicated).get())
    let twice = Self.everything.replacingOccurrences(
      of: "\"inner\": {", with: "\"inner\": {\"tags\": [], \"n\": 0, ")
    #expect(try ours(Everything.self, twice).get().inner.tags == [])
    #expect(try ours(Everything.self, twice).get() == foundation(Everything.self, twice).get())
    struct A: Decodable, Equatable { let a: Int }
    #expect(try ours(A.self, duplicated).get() == A(a: 1))
    #expect(try foundation(A.self, duplicated).get() == A(a: 1))
  }

  @Test func syntaxErrorsNameTheByte() {
    for (json, offset, reason) in [
      ("[1, 2", 5, "the body ends too soon"), ("{\"a\" 1}", 5, "expected a colon after the key"),
      ("[1] x", 4, "more follows the value"),
      ("\"a\u{1}\"", 2, "a control character is not escaped in a string"),
    ] {
      guard case .failure(let error) = ours(Int.self, json),
        case .dataCorrupted(let context) = error as? DecodingError,
        let syntax = context.underlyingError as? JSONSyntaxError
      else {
        Issue.record("expected a syntax error for \(json)")
        continue
      }
      #expect(syntax.offset == offset, "\(json)")
      #expect(syntax.reason == reason, "\(json)")
    }
  }

  @Test func nestingDeeperThanFiveHundredTwelveIsRefusedWithoutCrashing() {
    let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
    guard case .failure(let error) = ours([Int].self, deep),
      case .dataCorrupted(let context) = error as? DecodingError
    else {
      Issue.record("expected the nesting to be refused")
      return
    }
    #expect((context.underlyingError as? JSONSyntaxError)?.reason.contains("512") == true)
    let shallow = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect((try? ours(AnyDepth.self, shallow).get()) != nil)
  }

  @Test func largeObjectsFindEveryKey() throws {
    let members = (0..<200).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
    let json = "{\(members), \"k7\": -1}"
    struct Picks: Decodable, Equatable {
      let k0: Int
      let k7: Int
      let k199: Int
    }
    #expect(try ours(Picks.self, json).get() == Picks(k0: 0, k7: 7, k199: 199))
    #expect(try ours([String: Int].self, json).get() == foundation([String: Int].self, json).get())
  }

  @Test func handWrittenDecodersSeeTheSameContainers() throws {
    let json =
      "{\"id\": 3, \"meta\": {\"n\": null, \"list\": [1, null, 2]}, \"super\": {\"id\": 9}}"
    #expect(try ours(Custom.self, json).get() == foundation(Custom.self, json).get())
    let custom = try ours(Custom.self, json).get()
    #expect(custom.keys == ["id", "meta", "super"])
    #expect(custom.list == [1, 2] && custom.nulls == 1 && custom.parentID == 9)
  }
}

/// Any nesting of arrays.
private struct AnyDepth: Decodable {
  init(from decoder: any Decoder) throws {
    var container = try decoder.unkeyedContainer()
    while !container.isAtEnd { _ = try container.decode(AnyDepth.self) }
  }
}

/// A decoder written by hand: nested containers, nulls, all keys and a super decoder.
private struct Custom: Decodable, Equatable {
  let keys: [String]
  let list: [Int]
  let nulls: Int
  let parentID: Int
  let missingIsNil: Bool

  private struct Key: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  init(from decoder: any Decoder) throws {
    let top = try decoder.container(keyedBy: Key.self)
    keys = top.allKeys.map(\.stringValue).sorted()
    let meta = try top.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: "meta"))
    missingIsNil =
      try meta.decodeNil(forKey: Key(stringValue: "n")) && !meta.contains(Key(stringValue: "zz"))
    var list = try meta.nestedUnkeyedContainer(forKey: Key(stringValue: "list"))
    var values: [Int] = []
    var nulls = 0
    while !list.isAtEnd {
      if try list.decodeNil() { nulls += 1 } else { values.append(try list.decode(Int.self)) }
    }
    self.list = values
    self.nulls = nulls
    let parent = try top.superDecoder().container(keyedBy: Key.self)
    parentID = try parent.decode(Int.self, forKey: Key(stringValue: "id"))
  }
}
