import Foundation

/// A JSON value as data: dictionaries, arrays, strings, numbers, booleans and null. What a
/// value of any `Codable` type is kept as where its type is not known (a credential in the api
/// context file), and what a command's `--format json` answer is built from.
public enum JSONValue: Sendable, Hashable, Codable {
  /// A string.
  case string(String)
  /// A whole number.
  case integer(Int)
  /// A number with a fraction or an exponent.
  case number(Double)
  /// `true` or `false`.
  case boolean(Bool)
  /// A list, in order.
  case array([JSONValue])
  /// An object, by key.
  case object([String: JSONValue])
  /// `null`.
  case null

  /// The JSON value of a Foundation value (`String`, `Bool`, `Int`, `Double`, arrays and
  /// dictionaries of them, nil): what `JSONSerialization` reads or a reply is written from.
  public init(_ value: Any) throws {
    switch value {
    case let text as String: self = .string(text)
    case let flag as Bool: self = .boolean(flag)
    case let number as Int: self = .integer(number)
    case let number as Int64: self = .integer(Int(number))
    case let number as Double: self = number.isFinite ? .number(number) : .null
    case let list as [Any]: self = .array(try list.map(JSONValue.init))
    case let fields as [String: Any]: self = .object(try fields.mapValues(JSONValue.init))
    case let optional as Any? where optional == nil: self = .null
    default:
      throw EncodingError.invalidValue(
        value, .init(codingPath: [], debugDescription: "\(type(of: value)) is not a JSON value"))
    }
  }

  /// `value` encoded by `JSONEncoder` and read back as a JSON value.
  public init(encoding value: some Encodable, with encoder: JSONEncoder = JSONEncoder()) throws {
    self = try JSONDecoder().decode(JSONValue.self, from: try encoder.encode(value))
  }

  /// This value decoded as a `T`, as `JSONDecoder` would decode its text.
  public func decode<T: Decodable>(
    _ type: T.Type, with decoder: JSONDecoder = JSONDecoder()
  ) throws -> T {
    try decoder.decode(type, from: try JSONEncoder().encode(self))
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if container.decodeNil() {
      self = .null
    } else if let flag = try? container.decode(Bool.self) {
      self = .boolean(flag)
    } else if let number = try? container.decode(Int.self) {
      self = .integer(number)
    } else if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else if let text = try? container.decode(String.self) {
      self = .string(text)
    } else if let list = try? container.decode([JSONValue].self) {
      self = .array(list)
    } else {
      self = .object(try container.decode([String: JSONValue].self))
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    switch self {
    case .string(let text): try container.encode(text)
    case .integer(let number): try container.encode(number)
    case .number(let number): try container.encode(number)
    case .boolean(let flag): try container.encode(flag)
    case .array(let list): try container.encode(list)
    case .object(let fields): try container.encode(fields)
    case .null: try container.encodeNil()
    }
  }
}

extension JSONValue {
  /// The value at `path` (object keys; a number is an array's index), or nil when there is none.
  public subscript(path: [String]) -> JSONValue? {
    var current = self
    for key in path {
      switch current {
      case .object(let fields):
        guard let next = fields[key] else { return nil }
        current = next
      case .array(let list):
        guard let index = Int(key), list.indices.contains(index) else { return nil }
        current = list[index]
      default: return nil
      }
    }
    return current
  }
}
