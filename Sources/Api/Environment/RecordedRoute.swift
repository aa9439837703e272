import Foundation
import HTTPTypes

extension Route {
  /// The route as bytes to keep (an outbox keeps a write so, to send it in a later process):
  /// method, path, query, header fields, the body read whole (a file's bytes as they are now)
  /// and what it accepts. `Route(recorded:)` reads them back.
  public func recorded() throws -> Data {
    try JSONEncoder().encode(
      Recorded(
        method: method.rawValue, path: path, query: query.map { [$0.name, $0.value] },
        headers: headerFields.map { [$0.name.rawName, $0.value] }, body: try body?.data(),
        contentType: body?.contentType, isIdempotent: isIdempotent,
        acceptableStatus: [acceptableStatus.lowerBound, acceptableStatus.upperBound],
        acceptableContentTypes: acceptableContentTypes))
  }

  /// A route `recorded()` kept; throws `ApiError.invalidRoute` for bytes that are not one.
  public init(recorded data: Data) throws {
    guard let recorded = try? JSONDecoder().decode(Recorded.self, from: data),
      let method = HTTPRequest.Method(recorded.method),
      recorded.acceptableStatus.count == 2,
      recorded.acceptableStatus[0] <= recorded.acceptableStatus[1]
    else {
      throw ApiError.invalidRoute(
        route: Route(.post, "outbox"), reason: "its kept bytes are not a recorded request")
    }
    var fields = HTTPFields()
    for pair in recorded.headers {
      guard pair.count == 2, let name = HTTPField.Name(pair[0]) else { continue }
      fields.append(HTTPField(name: name, value: pair[1]))
    }
    self.init(
      method, recorded.path,
      query: recorded.query.compactMap { pair in
        pair.first.flatMap { $0 }.map {
          URLQueryItem(name: $0, value: pair.dropFirst().first ?? nil)
        }
      },
      headerFields: fields,
      body: recorded.body.map { .bytes($0, contentType: recorded.contentType) },
      isIdempotent: recorded.isIdempotent)
    acceptableStatus = recorded.acceptableStatus[0]..<recorded.acceptableStatus[1]
    acceptableContentTypes = recorded.acceptableContentTypes
  }

  private struct Recorded: Codable {
    var method: String
    var path: String
    var query: [[String?]]
    var headers: [[String]]
    var body: Data?
    var contentType: String?
    var isIdempotent: Bool
    var acceptableStatus: [Int]
    var acceptableContentTypes: [String]?
  }
}
