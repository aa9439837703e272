import Api
import Domain
import Foundation
import HTTPTypes
import Layers

/// One call of a generated client, as `KernelTransport` receives it: its operation, method, path
/// (with its query) below the server URL, header fields and body. Turned at this edge into one
/// of Kernel's calls (`call(paging:)`), answered when it is a read, else written.
struct OperationCall: Sendable, Hashable {
  /// The OpenAPI document's `operationId`: `getMovie`.
  var operationID: String
  /// The HTTP method.
  var method: HTTPRequest.Method
  /// Below the server URL, without a leading `/`, with its query: `movies/1?lang=en`.
  var path: String
  /// The header fields the generated client set.
  var headerFields: HTTPFields
  /// The body, read whole; nil for none.
  var body: Data?

  /// A call of `operationID`; a leading `/` of `path` is dropped.
  init(
    operationID: String, method: HTTPRequest.Method, path: String,
    headerFields: HTTPFields = [:], body: Data? = nil
  ) {
    self.operationID = operationID
    self.method = method
    self.path = String(path.drop { $0 == "/" })
    self.headerFields = headerFields
    self.body = body
  }

  /// A GET or HEAD: its answer may be kept by a caching layer.
  var isRead: Bool { method == .get || method == .head }

  /// The operation as Kernel's call: its answer, the whole response, kept under the operation
  /// and its path with the query (`getMovie movies/1`) when it is a read; its validators are the
  /// response's own. With `paging`, the response of every page gathered
  /// (`KernelTransport.paging`). Written, it keeps the order of its path and the generated
  /// client's `Idempotency-Key` when it set one.
  func call(paging: (next: Paging, items: String)? = nil) -> ServiceCall<OperationAnswer> {
    let call = ServiceCall(
      route, name: operationID, key: "\(operationID) \(path)",
      summary: isRead ? "\(operationID) \(path)" : "\(operationID) \(method) \(path)",
      codec: isRead ? .json : nil, paging: paging
    ) { OperationAnswer(status: $0.status, headerFields: $0.headerFields, body: $0.body) }
    guard !isRead else { return call }
    return call.writing(ordering: String(path.prefix { $0 != "?" }))
      .written(idempotencyKey: HTTPField.Name("Idempotency-Key").flatMap { headerFields[$0] })
  }

  /// The route the api client sends: the path and query below the environment's base URL.
  var route: Route {
    let parts = path.split(separator: "?", maxSplits: 1)
    let query =
      parts.count == 2
      ? (URLComponents(string: "?" + parts[1])?.queryItems ?? []) : []
    var fields = headerFields
    fields[.contentLength] = nil
    let idempotencyKey = HTTPField.Name("Idempotency-Key").flatMap { fields[$0] }
    return Route(
      method, parts.first.map(String.init) ?? "", query: query, headerFields: fields,
      body: body.map { .bytes($0, contentType: headerFields[.contentType]) },
      isIdempotent: idempotencyKey != nil ? true : nil)
  }
}

/// What an operation answered: status, header fields and body, as a cache keeps it.
struct OperationAnswer: Sendable, Hashable, Codable {
  /// The HTTP status.
  public var status: Int
  /// The answer's header fields.
  public var headerFields: HTTPFields
  /// The answer's body.
  public var body: Data

  /// An answer of `status`, with `headerFields` and `body`.
  public init(status: Int, headerFields: HTTPFields = [:], body: Data = Data()) {
    self.status = status
    self.headerFields = headerFields
    self.body = body
  }

  private enum CodingKeys: String, CodingKey { case status, headers, body }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    status = try container.decode(Int.self, forKey: .status)
    body = try container.decode(Data.self, forKey: .body)
    var fields = HTTPFields()
    for pair in try container.decode([[String]].self, forKey: .headers) {
      guard pair.count == 2, let name = HTTPField.Name(pair[0]) else { continue }
      fields.append(HTTPField(name: name, value: pair[1]))
    }
    headerFields = fields
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(status, forKey: .status)
    try container.encode(body, forKey: .body)
    try container.encode(headerFields.map { [$0.name.rawName, $0.value] }, forKey: .headers)
  }
}
