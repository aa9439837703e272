import Domain
import Foundation
import KernelJSON

/// Where in a body the value of a route lives, the features AlamofireCoreData users rely on:
/// a key path (`"data"`, `"info.token"`) and an envelope (`{"success": 1, "data": …}`, where
/// `success` 0 is an error carrying the body's `message` or `error`).
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
    do {
      return try JSONBodyDecoder(dateDecoding: .day).decode(from: data) { root in
        try locate(in: root).decode(T.self)
      }
    } catch let error as DecodingError {
      throw Self.apiError(error, route: route)
    } catch let failure as EnvelopeFailure {
      throw ApiError.envelopeFailure(route: route, message: failure.message)
    }
  }

  /// The decoder at the value: past the envelope, down the key path.
  private func locate(in root: JSONNode) throws -> JSONNode {
    var located = root
    if envelope {
      let top = try root.container(keyedBy: AnyKey.self)
      let success: Bool
      if let flag = try? top.decode(Bool.self, forKey: AnyKey("success")) {
        success = flag
      } else {
        success = try top.decode(Int.self, forKey: AnyKey("success")) != 0
      }
      guard success else {
        let message =
          (try? top.decode(String.self, forKey: AnyKey("message")))
          ?? (try? top.decode(String.self, forKey: AnyKey("error"))) ?? "success is 0"
        throw EnvelopeFailure(message: message)
      }
      located = try located.member("data")
    }
    for key in keyPath { located = try located.member(key) }
    return located
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
        let detail = (context.underlyingError as? JSONSyntaxError).map { ": \($0)" } ?? ""
        return .decoding(route: route, field: "", reason: "the body is not valid JSON\(detail)")
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
