import Foundation

/// A one-line answer: the sentence as text, or a JSON object for scripts.
enum Reply {
  static func say(_ session: Session, _ text: String, _ fields: [String: any Sendable]) throws {
    if session.format == .json {
      Terminal.printExact(try json(fields))
    } else {
      Terminal.print(text)
    }
  }

  static func json(_ object: Any) throws -> String {
    let data = try JSONSerialization.data(
      withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    return String(decoding: data, as: UTF8.self)
  }
}
