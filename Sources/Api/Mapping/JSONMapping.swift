import Domain
import Foundation

/// Where in a body the value of a route lives, the features AlamofireCoreData users rely on:
/// a key path (`"data"`, `"info.token"`) and an envelope (`{"success": 1, "data": …}`, where
/// `success` 0 is an error carrying the body's `message` or `error`). Bodies are decoded by
/// Foundation's `JSONDecoder`; a key path or an envelope is walked by a small wrapper type
/// (`Located`), so the decoder sees one value and reports every field by its whole path.
public struct JSONMapping: Sendable, Hashable {
  /// Dot-separated keys to walk before decoding; empty for the top level.
  public var keyPath: [String]
  /// Whether the body is an envelope whose `data` holds the value (the key path applies below it).
  public var envelope: Bool

  public init(keyPath: String? = nil, envelope: Bool = false) {
    self.keyPath = keyPath.map { $0.split(separator: ".").map(String.init) } ?? []
    self.envelope = envelope
  }

  /// The whole body.
  public static let body = JSONMapping()

  /// Decodes a `T` from `data`, whatever the response's content type said. Failures name the
  /// route and the field's path, e.g. `data.cast[2].name`.
  public func decode<T: Decodable>(_ type: T.Type, from data: Data, route: Route) throws -> T {
    if data.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
      throw ApiError.decoding(route: route, field: "", reason: "the body is empty")
    }
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .custom(Self.day)
    do {
      if keyPath.isEmpty && !envelope { return try decoder.decode(T.self, from: data) }
      decoder.userInfo[Located<T>.mapping] = self
      return try decoder.decode(Located<T>.self, from: data).value
    } catch let error as DecodingError {
      throw Self.apiError(error, route: route)
    } catch let failure as EnvelopeFailure {
      throw ApiError.envelopeFailure(route: route, message: failure.message)
    }
  }

  /// A calendar day, `yyyy-MM-dd`, as midnight UTC: how the movie API writes dates.
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

  static func apiError(_ error: DecodingError, route: Route) -> ApiError {
    switch error {
    case .typeMismatch(let type, let context):
      return .decoding(
        route: route, field: path(context.codingPath),
        reason: "expected \(describe(type)), found another type")
    case .valueNotFound(let type, let context):
      return .decoding(
        route: route, field: path(context.codingPath),
        reason: "expected \(describe(type)), found null")
    case .keyNotFound(let key, let context):
      return .decoding(
        route: route, field: path(context.codingPath + [key]), reason: "the field is missing")
    case .dataCorrupted(let context):
      if context.codingPath.isEmpty {
        return .decoding(route: route, field: "", reason: "the body is not valid JSON")
      }
      return .decoding(
        route: route, field: path(context.codingPath), reason: context.debugDescription)
    @unknown default:
      return .decoding(route: route, field: "", reason: "\(error)")
    }
  }

  /// `cast[2].name` from coding keys.
  static func path(_ keys: [any CodingKey]) -> String {
    var text = ""
    for key in keys {
      if let index = key.intValue,
        key.stringValue == "Index \(index)" || key.stringValue == String(index)
      {
        text += "[\(index)]"
      } else {
        text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
      }
    }
    return text
  }

  private static func describe(_ type: Any.Type) -> String {
    switch type {
    case is String.Type: "a string"
    case is Int.Type, is Double.Type: "a number"
    case is Bool.Type: "a boolean"
    case is [Any].Type: "an array"
    default: "\(type)".contains("Dictionary") ? "an object" : "\(type)"
    }
  }
}

/// Why an envelope said no.
struct EnvelopeFailure: Error {
  let message: String
}

/// The value at a mapping's place in the body: past the envelope, down the key path. Its coding
/// path is the walk, so a failure below names the whole path (`data.cast[1].name`).
struct Located<T: Decodable>: Decodable {
  // A constant name, never nil (the initializer is failable only in its signature).
  static var mapping: CodingUserInfoKey { CodingUserInfoKey(rawValue: "kernel.jsonMapping")! }

  let value: T

  init(from decoder: any Decoder) throws {
    guard let mapping = decoder.userInfo[Self.mapping] as? JSONMapping else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "no mapping was given to the decoder"))
    }
    var keys = mapping.keyPath
    var container = try decoder.container(keyedBy: AnyKey.self)
    if mapping.envelope {
      let success: Bool
      if let flag = try? container.decode(Bool.self, forKey: AnyKey("success")) {
        success = flag
      } else {
        success = try container.decode(Int.self, forKey: AnyKey("success")) != 0
      }
      guard success else {
        let message =
          (try? container.decode(String.self, forKey: AnyKey("message")))
          ?? (try? container.decode(String.self, forKey: AnyKey("error"))) ?? "success is 0"
        throw EnvelopeFailure(message: message)
      }
      keys.insert("data", at: 0)
    }
    guard let last = keys.popLast() else {
      value = try T(from: decoder)
      return
    }
    for key in keys {
      container = try container.nestedContainer(keyedBy: AnyKey.self, forKey: AnyKey(key))
    }
    value = try container.decode(T.self, forKey: AnyKey(last))
  }
}

/// A key by name, for walking a body whose keys are known only at run time.
struct AnyKey: CodingKey {
  let stringValue: String
  let intValue: Int? = nil
  init(_ name: String) { stringValue = name }
  init?(stringValue: String) { self.init(stringValue) }
  init?(intValue: Int) { nil }
}
