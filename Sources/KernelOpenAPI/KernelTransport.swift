import Api
import Domain
import Foundation
import HTTPTypes
import Layers
import OpenAPIRuntime

/// A generated client's `ClientTransport` that runs each operation as one of Kernel's calls, on
/// the stack the profile's config names for it (`getMovie: [cache(networkFirst), api]`), else on
/// the stack of the whole api (`movieOperations: [logging, api]`): a GET is answered (kept,
/// watched and answered offline by the same store as any call), any other method is written
/// (sent, or kept by the stack's outbox: a `202` with `Kernel-Outbox: queued; id=N`). The
/// document's server URL is not used: the environment in use gives the base URL.
///
/// ```swift
/// let client = Client(
///   serverURL: try Servers.Server1.url(), configuration: .kernel,
///   transport: KernelTransport(try composed.stack("movieOperations")))
/// let movie = try await client.getMovie(path: .init(id: 1)).ok.body.json
/// ```
///
/// A refusal (4xx, 5xx after the retriers) is handed to the generated client as the response
/// it is, for its documented or undocumented case; failures without a response (unreachable, a
/// deadline, a cache miss) are thrown, with Kernel's one-sentence descriptions.
public struct KernelTransport: ClientTransport {
  /// The stack for every operation without one of its own.
  public let stack: ServiceStack
  /// Stacks of their own, by operation id.
  public let operations: [String: ServiceStack]
  /// The most a request body may hold: it is read whole, to be sent, retried or kept.
  public let maxRequestBytes: Int
  /// The list operations answered a page at a time, by operation id: how the next page is
  /// found (a cursor field or `Link`, `Paging`) and where each page's items are (a dotted key
  /// path; empty for a body that is the list). Their generated client gets every page's items
  /// in one answer, the last page's cursor (none) with them: no cursor loop of the app's.
  public let paging: [String: (next: Paging, items: String)]

  /// The header of a write's `202` answer when the stack's outbox kept it: `queued; id=7`.
  public static let outboxHeader = HTTPField.Name("Kernel-Outbox")
  /// The header of a read's answer that says where it came from (`Answer.origin`: `network`,
  /// `cache`, `pending`, `local`), beside `Age` (the stored copy's, in seconds): an app whose
  /// document declares both reads them from the generated client's typed answer
  /// (`Answer(_:origin:age:)`), values like any other header.
  public static let originHeader = HTTPField.Name("Kernel-Origin")

  /// Runs every operation on `stack`, and those named in `operations` on their own
  /// (`composed.stacks(named:)`); those named in `paging` gather their pages
  /// (`["listMovies": (.field("next_cursor", query: "cursor"), items: "items")]`); bodies up to
  /// `maxRequestBytes` (64 MiB).
  public init(
    _ stack: ServiceStack, operations: [String: ServiceStack] = [:],
    paging: [String: (next: Paging, items: String)] = [:], maxRequestBytes: Int = 64 << 20
  ) {
    self.stack = stack
    self.operations = operations
    self.paging = paging
    self.maxRequestBytes = maxRequestBytes
  }

  public func send(
    _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
  ) async throws -> (HTTPResponse, HTTPBody?) {
    var data: Data?
    if let body { data = try await Data(collecting: body, upTo: maxRequestBytes) }
    let call = OperationCall(
      operationID: operationID, method: request.method, path: request.path ?? "",
      headerFields: request.headerFields, body: data)
    let stack = operations[operationID] ?? stack
    var answer: OperationAnswer
    do {
      if call.isRead {
        let read = try await stack.answer(call.call(paging: paging[operationID]))
        answer = read.value
        if let name = Self.originHeader { answer.headerFields[name] = read.origin.rawValue }
        // An age no whole number holds (a stored time past any range) is left unsaid.
        if read.origin != .network, let age = Int(exactly: read.age.rounded()) {
          answer.headerFields[.age] = "\(age)"
        }
      } else {
        answer = try await write(call, on: stack)
      }
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

  /// A write: the api's answer, or `202` when the stack kept it.
  private func write(_ call: OperationCall, on stack: ServiceStack) async throws
    -> OperationAnswer
  {
    switch try await stack.write(call.call()) {
    case .sent(let answer): return answer
    case .applied(let problem):
      // The operation's answer is its whole response, so this cannot happen; said if it does.
      throw OperationWriteApplied(operation: call.operationID, problem: problem)
    case .queued(let kept):
      var fields = HTTPFields()
      if let name = Self.outboxHeader { fields[name] = "queued; id=\(kept.id)" }
      return OperationAnswer(status: 202, headerFields: fields)
    }
  }
}

/// A write the api took whose answer could not be read: bad data from the api (exit 65).
struct OperationWriteApplied: Error, CustomStringConvertible, ClassifiedError {
  let operation: String
  let problem: String
  var failure: ServiceFailure { .badData }
  var description: String {
    "\(operation) was applied by the api, but its answer could not be read (\(problem)); do not"
      + " send it again."
  }
}

extension ClientError: WrappingError {
  /// The error a command reports: the underlying one; a body the generated code could not
  /// decode, or a 2xx it could not take (of a type its `Accept` did not name: JSON a static host
  /// sends as `text/html`), said as the api's bad data naming the route (exit 65); for a write
  /// the api took so, that it was applied and must not be sent again; a refusal (4xx, 5xx) it
  /// could not read, as the refusal its status says (`HTTPFailure`: 404 is exit 66).
  public var wrapped: any Error {
    let path = (request?.path ?? "").split(separator: "?", maxSplits: 1).first ?? ""
    var route = Route(request?.method ?? .get, String(path))
    let taken = response.map { (200..<300).contains($0.status.code) } ?? false
    let problem: any Error
    if let decoding = underlyingError as? DecodingError,
      case .decoding(let route, let field, let reason) = JSONMapping.apiError(
        decoding, route: route)
    {
      problem = ApiError.decoding(route: route, field: field, reason: "\(reason) (\(operationID))")
    } else if taken, ServiceFailure.of(underlyingError) == nil {
      // Each media type the client accepts, without its parameters (`;q=0.9`).
      route.acceptableContentTypes = request?.headerFields[.accept].map {
        $0.split(separator: ",").map {
          ($0.split(separator: ";").first ?? "").trimmingCharacters(in: .whitespaces)
        }
      }
      if let type = response?.headerFields[.contentType], !route.accepts(contentType: type) {
        problem = ApiError.unacceptableContentType(
          route: route, contentType: type, accepted: route.acceptableContentTypes ?? [])
      } else {
        problem = ApiError.decoding(
          route: route, field: "", reason: "\(underlyingError) (\(operationID))")
      }
    } else if let status = response?.status.code, status >= 400,
      ServiceFailure.of(underlyingError) == nil
    {
      return HTTPFailure(route: route, status: status, headerFields: response?.headerFields ?? [:])
    } else {
      return underlyingError
    }
    guard taken, route.method != .get, route.method != .head else { return problem }
    return OperationWriteApplied(operation: operationID, problem: clause(problem))
  }
}

extension Answer {
  /// `value`, from where the `Kernel-Origin` and `Age` header fields of its operation's answer
  /// say (`KernelTransport.originHeader`), as a generated client reads them when its document
  /// declares them; from the network when it has none.
  ///
  /// ```swift
  /// case .ok(let ok):
  ///   return Answer(try ok.body.json, origin: ok.headers.Kernel_hyphen_Origin, age: ok.headers.Age)
  /// ```
  public init(_ value: Value, origin: String?, age: Int?) {
    self.init(
      value: value, origin: origin.flatMap(ResultOrigin.init(rawValue:)) ?? .network,
      age: TimeInterval(age ?? 0))
  }
}
