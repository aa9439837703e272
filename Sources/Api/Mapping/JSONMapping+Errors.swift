import Foundation

/// How a body that does not decode is reported: one `ApiError.decoding` naming the route, the
/// field's path (`cast[2].name`) and what was wrong.
extension JSONMapping {
  /// `error` as the client reports it: bad data from the api at `route`, naming the field
  /// (`cast[2].name`) and what was wrong; for decoders of an app's own (a generated OpenAPI
  /// client's) too. With the `body` it was decoded from, a body Foundation calls "not valid
  /// JSON" that is valid is told as what it is: a number too big for its field (named), or a
  /// value that does not fit its field's type.
  public static func apiError(_ error: DecodingError, route: Route, body: Data? = nil) -> ApiError {
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
        let (field, reason) = unfit(body)
        return .decoding(route: route, field: field, reason: reason)
      }
      return .decoding(
        route: route, field: path(context.codingPath), reason: context.debugDescription)
    @unknown default:
      return .decoding(route: route, field: "", reason: "\(error)")
    }
  }

  /// Why Foundation's decoder called `body` not valid JSON, with no field (as it does for a
  /// number that does not fit its field, on Linux): the field and reason of a whole number too
  /// big for 64 bits, else of a body that is JSON but has a value its type cannot take.
  static func unfit(_ body: Data?) -> (field: String, reason: String) {
    guard let body,
      let value = try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed)
    else { return ("", "the body is not valid JSON") }
    if let (field, digits) = outsized(value, at: "") {
      return (field, "the number \(digits) does not fit a 64-bit integer")
    }
    return (
      "",
      "a value does not fit its field's type (a number too big for it, or with a fraction where a whole number is expected)"
    )
  }

  /// The path and digits of the first whole number in `value` too big for 64 bits.
  private static func outsized(_ value: Any, at path: String) -> (String, String)? {
    switch value {
    case let fields as [String: Any]:
      for (key, field) in fields.sorted(by: { $0.key < $1.key }) {
        if let found = outsized(field, at: path.isEmpty ? key : path + "." + key) { return found }
      }
    case let list as [Any]:
      for (index, item) in list.enumerated() {
        if let found = outsized(item, at: path + "[\(index)]") { return found }
      }
    case let number as NSNumber:
      let digits = number.description
      let whole = digits.drop { $0 == "-" }
      if !whole.isEmpty, whole.allSatisfy({ $0.isASCII && $0.isNumber }), Int64(digits) == nil {
        return (path, digits)
      }
    default: break
    }
    return nil
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
