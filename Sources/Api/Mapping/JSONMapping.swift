import Domain
import Foundation
import Synchronization

/// How a JSON body becomes a value, described once per api (or per request) instead of decoded
/// by hand: where the value is (a key path, `"data"`, `"info.token"`), whether an envelope says
/// success (`{"success": 1, "data": …}`, where a false or 0 flag is an error carrying the body's
/// message), how dates are written and how keys are spelled.
///
/// ```swift
/// // {"data": {"created_at": "2026-11-25T10:00:07.123Z", …}, "meta": {"next_page": 2}}
/// let issues = JSONMapping(keyPath: "data", dates: .iso8601, keys: .snakeCase)
/// // The talk's {"success": 1, "data": …}
/// let talk = JSONMapping.successEnvelope
/// ```
///
/// Bodies are decoded by Foundation's `JSONDecoder` with these strategies (`decoder()`); a key
/// path or an envelope is walked by a small wrapper type (`Located`), so the decoder sees one
/// value and reports every field by its whole path. `encoder()` writes request bodies with the
/// same strategies.
public struct JSONMapping: Sendable, Hashable {
  /// Keys to walk before decoding, as the body spells them; empty for the top level.
  public var keyPath: [String]
  /// Where an envelope's success flag is (`true`/`false` or a number, 0 meaning failure); nil
  /// when the body has none.
  public var successKeyPath: [String]?
  /// Where a failure's message may be, tried in order: in an envelope that says failure, and in
  /// the body of a non-2xx answer.
  public var messageKeyPaths: [[String]]
  /// How dates are written.
  public var dates: DateStrategy
  /// How keys are written (as declared, or snake_case).
  public var keys: KeyStrategy

  /// - Parameters:
  ///   - keyPath: dot-separated keys to the value (`"data"`, `"info.book"`); nil for the body.
  ///   - success: dot-separated keys to an envelope's success flag.
  ///   - messages: dot-separated keys to a failure's message, tried in order.
  ///   - dates: how dates are written (ISO 8601 unless said otherwise).
  ///   - keys: how keys are written (`.snakeCase` maps `added_at` to `addedAt`).
  public init(
    keyPath: String? = nil, success: String? = nil,
    messages: [String] = ["error.message", "error", "message"], dates: DateStrategy = .iso8601,
    keys: KeyStrategy = .asWritten
  ) {
    self.keyPath = Self.keys(keyPath)
    self.successKeyPath = success.map(Self.keys)
    self.messageKeyPaths = messages.map(Self.keys)
    self.dates = dates
    self.keys = keys
  }

  /// The whole body, dates as ISO 8601, keys as written.
  public static let body = JSONMapping()

  /// The talk's envelope: `{"success": 1, "data": …}`, or `{"success": 0, "message": …}`.
  public static let successEnvelope = JSONMapping(
    keyPath: "data", success: "success", messages: ["message", "error"])

  /// This mapping with the value at `keyPath` instead (below nothing else).
  public func at(_ keyPath: String?) -> JSONMapping {
    var mapping = self
    mapping.keyPath = Self.keys(keyPath)
    return mapping
  }

  /// This mapping with the value at `keyPath` below its own (`data` and `items`: `data.items`).
  public func below(_ keyPath: String) -> JSONMapping {
    var mapping = self
    mapping.keyPath += Self.keys(keyPath)
    return mapping
  }

  private static func keys(_ path: String?) -> [String] {
    path.map { $0.split(separator: ".").map(String.init) } ?? []
  }

  /// How dates are written in bodies.
  public enum DateStrategy: Sendable, Hashable {
    /// ISO 8601: a date and time with or without fractional seconds, `Z` or an offset
    /// (`2026-11-25T10:00:07.123Z`, `2026-11-25T11:00:07+01:00`), or a calendar day
    /// (`2026-11-25`, midnight UTC). Written with milliseconds, in UTC.
    case iso8601
    /// A calendar day only, `yyyy-MM-dd`, as midnight UTC.
    case day
    /// A number of seconds since 1970-01-01T00:00:00Z.
    case secondsSince1970
    /// A number of milliseconds since 1970-01-01T00:00:00Z.
    case millisecondsSince1970
    /// A `DateFormatter` pattern (`"dd/MM/yyyy HH:mm"`), read in UTC with the POSIX locale.
    case pattern(String)
  }

  /// How the body spells keys.
  public enum KeyStrategy: Sendable, Hashable {
    /// As the Swift properties are named.
    case asWritten
    /// `snake_case` in the body for `camelCase` properties (`created_at` is `createdAt`).
    case snakeCase
  }

  /// A decoder with this mapping's date and key strategies.
  public func decoder() -> JSONDecoder {
    let decoder = JSONDecoder()
    if keys == .snakeCase { decoder.keyDecodingStrategy = .convertFromSnakeCase }
    switch dates {
    case .iso8601: decoder.dateDecodingStrategy = .custom(Self.iso8601)
    case .day: decoder.dateDecodingStrategy = .custom(Self.day)
    case .secondsSince1970: decoder.dateDecodingStrategy = .secondsSince1970
    case .millisecondsSince1970: decoder.dateDecodingStrategy = .millisecondsSince1970
    case .pattern(let pattern):
      let formatter = PatternFormatter(pattern)
      decoder.dateDecodingStrategy = .custom { decoder in
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = formatter.date(from: text) else {
          throw DecodingError.dataCorruptedError(
            in: container,
            debugDescription: "expected a date as \(pattern), found \"\(text.prefix(40))\"")
        }
        return date
      }
    }
    return decoder
  }

  /// An encoder with this mapping's date and key strategies: a request body written as the api
  /// reads it.
  public func encoder() -> JSONEncoder {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    if keys == .snakeCase { encoder.keyEncodingStrategy = .convertToSnakeCase }
    switch dates {
    case .iso8601:
      encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(Self.iso8601String(date))
      }
    case .day:
      encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(CalendarDay.string(from: date))
      }
    case .secondsSince1970: encoder.dateEncodingStrategy = .secondsSince1970
    case .millisecondsSince1970: encoder.dateEncodingStrategy = .millisecondsSince1970
    case .pattern(let pattern):
      let formatter = PatternFormatter(pattern)
      encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(formatter.string(from: date))
      }
    }
    return encoder
  }

  /// Decodes a `T` from `data`, whatever the response's content type said. Failures name the
  /// route and the field's path, e.g. `data.cast[2].name`.
  public func decode<T: Decodable>(_ type: T.Type, from data: Data, route: Route) throws -> T {
    if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
      throw ApiError.decoding(route: route, field: "", reason: "the body is empty")
    }
    let decoder = decoder()
    do {
      if keyPath.isEmpty && successKeyPath == nil { return try decoder.decode(T.self, from: data) }
      decoder.userInfo[Located<T>.mapping] = self
      return try decoder.decode(Located<T>.self, from: data).value
    } catch let error as DecodingError {
      throw Self.apiError(error, route: route, body: data)
    } catch is EnvelopeFailure {
      throw ApiError.envelopeFailure(route: route, message: message(in: data) ?? "success is 0")
    }
  }

  /// The message a failure's body carries at one of `messageKeyPaths` (a string, or an object
  /// whose `message` is one), or nil.
  public func message(in body: Data) -> String? {
    guard let value = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
    for path in messageKeyPaths {
      switch value[path] {
      case .string(let text) where !text.isEmpty: return ApiError.excerpt(text)
      case .object(let fields):
        if case .string(let text) = fields["message"], !text.isEmpty {
          return ApiError.excerpt(text)
        }
      default: continue
      }
    }
    return nil
  }

  /// ISO 8601 with or without fractional seconds: how `.iso8601` reads dates.
  static let iso8601Style = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

  /// `date` in ISO 8601 with milliseconds in UTC (`2026-11-25T10:00:07.123Z`): how `.iso8601`
  /// writes dates. Rounded to the nearest millisecond: `Date`'s binary fraction of `.123` is
  /// `.12299…`, which the format style would cut to `.122`.
  public static func iso8601String(_ date: Date) -> String {
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    let seconds = (milliseconds / 1000).rounded(.down)
    let fraction = Int(milliseconds - seconds * 1000)
    let whole = Date(timeIntervalSince1970: seconds).formatted(Date.ISO8601FormatStyle())
    let digits = String(fraction + 1000).dropFirst()
    return whole.dropLast() + "." + digits + "Z"
  }

  /// An ISO 8601 date and time (with or without fractional seconds), or a calendar day.
  @Sendable static func iso8601(_ decoder: any Decoder) throws -> Date {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let date = iso8601Date(text) else {
      throw DecodingError.dataCorruptedError(
        in: container, debugDescription: iso8601Mismatch(text))
    }
    return date
  }

  /// `text` as `.iso8601` reads a date: an ISO 8601 date and time with or without fractional
  /// seconds, `Z` or an offset (`2016-12-16T10:00:00.123+01:00`), or a calendar day
  /// (`2016-12-16`, midnight UTC); nil for anything else, an impossible day or time included.
  public static func iso8601Date(_ text: String) -> Date? {
    if text.utf8.count == 10, let day = CalendarDay.date(from: text) { return day }
    guard isPlausibleDateTime(text) else { return nil }
    return try? iso8601Style.parse(text)
  }

  /// What a decoding error says of `text`, which is not an ISO 8601 date (Kernel's own: its
  /// mapping and KernelOpenAPI's transcoder say it alike).
  package static func iso8601Mismatch(_ text: String) -> String {
    "expected an ISO 8601 date, found \"\(text.prefix(40))\""
  }

  /// Whether `text` starts with a real day and time of day (`2026-11-25T23:59:60`): Foundation's
  /// parser on Linux rolls an hour of 25, a minute of 61 or February 30 over into the next
  /// day, so a server's wrong date would be read as another one.
  static func isPlausibleDateTime(_ text: String) -> Bool {
    let bytes = Array(text.utf8.prefix(19))
    guard bytes.count == 19, bytes[10] == UInt8(ascii: "T") || bytes[10] == UInt8(ascii: "t"),
      bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
      CalendarDay.date(from: String(decoding: bytes[0..<10], as: UTF8.self)) != nil
    else { return false }
    func number(_ range: Range<Int>) -> Int? {
      Int(String(decoding: bytes[range], as: UTF8.self))
    }
    guard let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19)
    else { return false }
    return (0...23).contains(hour) && (0...59).contains(minute) && (0...60).contains(second)
  }

  /// A calendar day, `yyyy-MM-dd`, as midnight UTC.
  @Sendable static func day(_ decoder: any Decoder) throws -> Date {
    let container = try decoder.singleValueContainer()
    let text = try container.decode(String.self)
    guard let day = CalendarDay.date(from: text) else {
      throw DecodingError.dataCorruptedError(
        in: container,
        debugDescription: "expected a day as yyyy-MM-dd, found \"\(text.prefix(40))\"")
    }
    return day
  }
}

/// One `DateFormatter` for a pattern, used by one decoder or encoder at a time under its lock
/// (a formatter is not safe to share, and making one per date costs microseconds each).
final class PatternFormatter: Sendable {
  private let formatter: Mutex<DateFormatter>

  init(_ pattern: String) {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "UTC")
    formatter.dateFormat = pattern
    self.formatter = Mutex(formatter)
  }

  func date(from text: String) -> Date? { formatter.withLock { $0.date(from: text) } }
  func string(from date: Date) -> String { formatter.withLock { $0.string(from: date) } }
}

/// Why an envelope said no.
struct EnvelopeFailure: Error {}

/// The value at a mapping's place in the body: past the envelope's flag, down the key path. Its
/// coding path is the walk, so a failure below names the whole path (`data.cast[1].name`).
struct Located<T: Decodable>: Decodable {
  // A constant name, never nil (the initializer is failable only in its signature).
  static var mapping: CodingUserInfoKey { CodingUserInfoKey(rawValue: "kernel.jsonMapping")! }

  let value: T

  init(from decoder: any Decoder) throws {
    guard let mapping = decoder.userInfo[Self.mapping] as? JSONMapping else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "no mapping was given to the decoder"))
    }
    // A snake_case decoder hands containers camelCase keys: the paths, written as the body
    // spells them, are converted the same way.
    let snakeCase = mapping.keys == .snakeCase
    func name(_ key: String) -> String { snakeCase ? AnyKey.camelCase(key) : key }
    let top = try decoder.container(keyedBy: AnyKey.self)
    if let flagPath = mapping.successKeyPath, let flagKey = flagPath.last {
      var container = top
      for key in flagPath.dropLast() {
        container = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(name(key)))
      }
      let success: Bool
      if let flag = try? container.decode(Bool.self, forKey: AnyKey(name(flagKey))) {
        success = flag
      } else {
        success = try container.decode(Int.self, forKey: AnyKey(name(flagKey))) != 0
      }
      guard success else { throw EnvelopeFailure() }
    }
    var keys = mapping.keyPath
    guard let last = keys.popLast() else {
      value = try T(from: decoder)
      return
    }
    var container = top
    for key in keys {
      container = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(name(key)))
    }
    value = try container.decode(T.self, forKey: AnyKey(name(last)))
  }
}

/// A key by name, for walking a body whose keys are known only at run time.
struct AnyKey: CodingKey {
  let stringValue: String
  let intValue: Int? = nil
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.init(stringValue) }
  init?(intValue: Int) { nil }

  /// `next_page` as `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase` gives it: `nextPage`.
  static func camelCase(_ key: String) -> String {
    let words = key.split(separator: "_", omittingEmptySubsequences: true)
    guard let first = words.first, words.count > 1 else { return key }
    let leading = String(key.prefix { $0 == "_" })
    let trailing = String(repeating: "_", count: key.reversed().prefix { $0 == "_" }.count)
    let rest = words.dropFirst().map { $0.capitalized }.joined()
    return leading + first.lowercased() + rest + trailing
  }
}
