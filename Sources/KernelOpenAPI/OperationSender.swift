import Api
import Composition
import Domain
import Foundation
import HTTPTypes
import Layers

/// One call of a generated client, as Kernel's layers see it: its operation, method, path (with
/// its query) below the server URL, header fields and body.
public struct OperationCall: Sendable, Hashable {
  /// The OpenAPI document's `operationId`: `getMovie`.
  public var operationID: String
  /// The HTTP method.
  public var method: HTTPRequest.Method
  /// Below the server URL, without a leading `/`, with its query: `movies/1?lang=en`.
  public var path: String
  /// The header fields the generated client set.
  public var headerFields: HTTPFields
  /// The body, read whole; nil for none.
  public var body: Data?

  /// A call of `operationID`; a leading `/` of `path` is dropped.
  public init(
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
  public var isRead: Bool { method == .get || method == .head }

  /// The layers' description of this call: its answer kept under the operation and its path
  /// with the query (`getMovie movies/1`); a write is never cached.
  public var serviceCall: ServiceCall<OperationAnswer> {
    ServiceCall(
      name: operationID, key: "\(operationID) \(path)", summary: "\(operationID) \(path)",
      codec: isRead ? .json : nil)
  }

  /// The route the api client sends: the path and query below the environment's base URL.
  public var route: Route {
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
public struct OperationAnswer: Sendable, Hashable, Codable {
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

/// An answer carries its own header fields: its `ETag` and `Last-Modified` are what a caching
/// layer keeps and offers back.
extension OperationAnswer: Validated {
  /// The answer itself.
  public var value: OperationAnswer { self }
  /// Its `ETag` and `Last-Modified`.
  public var validators: CacheValidators { CacheValidators(headerFields) }
}

/// How a generated client's calls are answered: the api (`ApiOperationSender`), or a stack of
/// layers over it or over the cache alone (`LayeredOperationSender`). A refusal is thrown (an
/// `ApiError.status`), so no layer keeps it as an answer; `KernelTransport` hands it to the
/// generated client as the response it is.
public protocol OperationSender: Sendable {
  /// The answer to `call`; a refusal is thrown.
  func send(_ call: OperationCall) async throws -> OperationAnswer
}

/// Sends each call through an `ApiClient`: the environment's base URL in place of the
/// document's server URL, the authenticator, adapters, retriers, redirect rule, deadline and
/// transport. A POST with an `Idempotency-Key` header may be retried by backoff.
public struct ApiOperationSender: OperationSender {
  /// The client every call goes through.
  public let client: ApiClient

  /// Sends through `client`.
  public init(client: ApiClient) { self.client = client }

  /// Sends `call` and returns its answer; a refusal is thrown as the client's `ApiError`.
  public func send(_ call: OperationCall) async throws -> OperationAnswer {
    let response = try await client.response(for: call.route)
    return OperationAnswer(
      status: response.status, headerFields: response.headerFields, body: response.body)
  }
}

/// A generated client's calls through a `LayerStack`: reads kept and answered by caching
/// layers under `getMovie movies/1`, writes passed down (or refused with no api under them).
public struct LayeredOperationSender: OperationSender, LayeredService {
  /// What answers under the layers: the api's sender, or nil for the store.
  public let base: Source<any OperationSender>?
  /// The layers the profile names.
  public var layers: LayerStack

  /// `layers` over `base`.
  public init(base: Source<any OperationSender>?, layers: [any ServiceLayer]) {
    self.base = base
    self.layers = LayerStack(layers)
  }

  /// `call` answered through the layers (`OperationCall.serviceCall`).
  public func send(_ call: OperationCall) async throws -> OperationAnswer {
    try await answer(call.serviceCall) { try await $0.send(call) }
  }
}
