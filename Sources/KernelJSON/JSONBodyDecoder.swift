import Domain
import Foundation

/// Kernel's JSON decoder: `Decodable` values from a body in about half the time Foundation's
/// `JSONDecoder` takes on API-sized bodies (`kernel-bench http` measures both), with the same
/// errors — `DecodingError`s whose coding paths name the field — so code written for one reads
/// the other. Unlike `JSONDecoder`, it reads the whole body before decoding: a body that is not
/// JSON is always said to be so (its `underlyingError` is a `JSONSyntaxError` naming the byte),
/// and a number that does not fit is refused at its field.
///
/// It parses the body once into a flat list of nodes and looks keys up by comparing bytes,
/// without building a dictionary per object. `Date`, `Data`, `URL` and `Decimal` decode as
/// `JSONDecoder` decodes them (dates by `dateDecoding`, data as base64, URLs from strings,
/// decimals from numbers).
///
/// ```swift
/// var decoder = JSONBodyDecoder()
/// decoder.dateDecoding = .secondsSince1970
/// let book = try decoder.decode(Book.self, from: body)
/// ```
public struct JSONBodyDecoder: Sendable {
  /// How a `Date` is written in the body.
  public enum DateDecoding: Sendable {
    /// A day as `yyyy-MM-dd`, in UTC (`CalendarDay`).
    case day
    /// Seconds since 1970 as a number.
    case secondsSince1970
    /// `Date`'s own `Decodable` conformance (seconds since 2001).
    case deferredToDate
    /// Your function, given a decoder at the date's field.
    case custom(@Sendable (any Decoder) throws -> Date)
  }

  public var dateDecoding: DateDecoding
  /// Handed to every `init(from:)` as `decoder.userInfo`.
  public var userInfo: [CodingUserInfoKey: any Sendable]

  public init(dateDecoding: DateDecoding = .deferredToDate) {
    self.dateDecoding = dateDecoding
    userInfo = [:]
  }

  /// A `T` from `data`. Throws `DecodingError`: `.dataCorrupted` with an empty coding path when
  /// the body is not JSON (its description names the byte), and otherwise at the field.
  public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
    try top(of: data) { try $0.decodeValue(T.self) }
  }

  /// What `body` makes of the value at the top of `data`.
  package func decode<T>(from data: Data, _ body: (JSONNode) throws -> T) throws -> T {
    try top(of: data) { try body(JSONNode(decoder: $0)) }
  }

  /// What `body` makes of the decoder at the top of `data`.
  private func top<T>(of data: Data, _ body: (NodeDecoder) throws -> T) throws -> T {
    let document: JSONDocument
    do {
      document = try JSONDocument(parsing: data)
    } catch let error as JSONSyntaxError {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: [], debugDescription: "The given data was not valid JSON.",
          underlyingError: error))
    }
    let session = DecodingSession(
      document: document, dateDecoding: dateDecoding, userInfo: userInfo)
    return try body(NodeDecoder(session: session, node: 0, parent: nil, key: nil))
  }
}

/// An element's place in an array, named as `JSONDecoder` names it.
struct IndexKey: CodingKey {
  let intValue: Int?
  var stringValue: String { "Index \(intValue ?? 0)" }
  init(_ index: Int) { intValue = index }
  init?(stringValue: String) { nil }
  init?(intValue: Int) { self.intValue = intValue }
}

/// What every decoder of one body shares: the document and the options.
final class DecodingSession {
  let document: JSONDocument
  let dateDecoding: JSONBodyDecoder.DateDecoding
  let userInfo: [CodingUserInfoKey: any Sendable]

  init(
    document: JSONDocument, dateDecoding: JSONBodyDecoder.DateDecoding,
    userInfo: [CodingUserInfoKey: any Sendable]
  ) {
    self.document = document
    self.dateDecoding = dateDecoding
    self.userInfo = userInfo
  }
}

/// A coding key made from any string.
package struct AnyKey: CodingKey {
  package let stringValue: String
  package let intValue: Int?

  package init(_ string: String) {
    stringValue = string
    intValue = nil
  }

  package init?(stringValue: String) { self.init(stringValue) }

  package init?(intValue: Int) {
    stringValue = String(intValue)
    self.intValue = intValue
  }
}
