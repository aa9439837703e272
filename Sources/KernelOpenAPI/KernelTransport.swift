import Api
import Composition
import Domain
import Foundation
import HTTPTypes
import OpenAPIRuntime

/// A generated client's `ClientTransport` that sends through Kernel: each operation through the
/// stack the profile's config names for it (`getMovie: [cache(networkFirst), api]`), else
/// through the stack of the whole api (`movieOperations: [logging, api]`). The document's
/// server URL is not used: the environment in use gives the base URL.
///
/// ```swift
/// let client = Client(
///   serverURL: try Servers.Server1.url(),
///   transport: try KernelTransport(composed, key: "movieOperations", operations: ["getMovie"]))
/// let movie = try await client.getMovie(path: .init(id: 1)).ok.body.html
/// ```
///
/// A refusal (4xx, 5xx after the retriers) is handed to the generated client as the response
/// it is, for its documented or undocumented case; failures without a response (unreachable, a
/// deadline, a cache miss) are thrown, with Kernel's one-sentence descriptions.
public struct KernelTransport: ClientTransport {
  /// The stack for every operation without one of its own.
  public let sender: any OperationSender
  /// Stacks of their own, by operation id.
  public let operations: [String: any OperationSender]
  /// The most a request body may hold: it is read whole, to be sent, retried or kept.
  public let maxRequestBytes: Int

  /// Sends every operation through `sender`, and those named in `operations` through their own;
  /// bodies up to `maxRequestBytes` (64 MiB).
  public init(
    _ sender: any OperationSender, operations: [String: any OperationSender] = [:],
    maxRequestBytes: Int = 64 << 20
  ) {
    self.sender = sender
    self.operations = operations
    self.maxRequestBytes = maxRequestBytes
  }

  /// The profile's stacks: `key`'s for every operation, and those of the `operations` and
  /// `writes` the profile stacks on their own (see `OpenAPIAssembly`).
  public init(
    _ composed: Composed, key: String, operations: [String] = [], writes: [String] = []
  ) throws {
    var own: [String: any OperationSender] = [:]
    for operation in operations + writes where composed.stacks(operation) {
      own[operation] = try composed.service((any OperationSender).self, tag: operation)
    }
    self.init(try composed.service((any OperationSender).self, tag: key), operations: own)
  }

  public func send(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
  ) async throws -> (HTTPResponse, HTTPBody?) {
    var data: Data?
    if let body { data = try await Data(collecting: body, upTo: maxRequestBytes) }
    let call = OperationCall(
      operationID: operationID, method: request.method, path: request.path ?? "",
      headerFields: request.headerFields, body: data)
    let answer: OperationAnswer
    do {
      answer = try await (operations[operationID] ?? sender).send(call)
    } catch ApiError.status(let failure) {
      answer = OperationAnswer(
        status: failure.status, headerFields: failure.headerFields, body: failure.body)
    } catch let failure as HTTPFailure {
      answer = OperationAnswer(
        status: failure.status, headerFields: failure.headerFields, body: failure.body)
    }
    return (
      HTTPResponse(status: .init(code: answer.status), headerFields: answer.headerFields),
      HTTPBody(answer.body)
    )
  }
}

/// A generated client wraps what its transport threw in a `ClientError`: the command front and
/// `ServiceFailure.of` report the cause (a cache miss, an unreachable api), with its sentence
/// and exit code. A body the generated code could not decode is bad data from the api (65),
/// said as the client's own decoding errors are, naming the operation and the field:
/// `GET movies/1 answered data that does not fit at cast[0].name: expected a string, found
/// another type (getMovie).`
extension ClientError: WrappingError {
  /// The error a command reports: the underlying one, or a decoding error said as the api's bad
  /// data.
  public var wrapped: any Error {
    guard let decoding = underlyingError as? DecodingError else { return underlyingError }
    let path = (request?.path ?? "").split(separator: "?", maxSplits: 1).first ?? ""
    let route = Route(request?.method ?? .get, String(path))
    guard
      case .decoding(let route, let field, let reason) = JSONMapping.apiError(
        decoding, route: route)
    else { return underlyingError }
    return ApiError.decoding(route: route, field: field, reason: "\(reason) (\(operationID))")
  }
}
