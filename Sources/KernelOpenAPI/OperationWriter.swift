import Api
import Composition
import Foundation
import HTTPTypes
import Layers

/// A generated client's write (a POST, PUT, PATCH, DELETE) through a write stack the config
/// names for its operation (`rateMovie: [outbox, api]`, `[outbox]`): sent at once, or kept in
/// the outbox when the api cannot take it and answered `202 Accepted` with
/// `Kernel-Outbox: queued; id=N` — a document that lists a 202 for the operation gives the
/// generated client a case for it. The write is kept under its `Idempotency-Key` header when
/// it has one (else a new key), in order per path; `outbox sync` sends it later.
public struct OperationWriter: OperationSender {
  /// The write stack: sends at once, or keeps in the outbox.
  public let writer: Writer

  /// Writes through `writer`.
  public init(writer: Writer) { self.writer = writer }

  /// The header a kept write is answered with.
  public static let outboxHeader = HTTPField.Name("Kernel-Outbox")

  /// The api's answer, or `202 Accepted` with `Kernel-Outbox: queued; id=N` when the write was
  /// kept.
  public func send(_ call: OperationCall) async throws -> OperationAnswer {
    let key = HTTPField.Name("Idempotency-Key").flatMap { call.headerFields[$0] }
    let write = WriteCall<OperationAnswer>(
      name: call.operationID, summary: "\(call.operationID) \(call.method) \(call.path)",
      request: try call.route.recorded(), idempotencyKey: key ?? UUID().uuidString,
      orderingKey: String(call.path.prefix { $0 != "?" }),
      decode: { try JSONDecoder().decode(OperationAnswer.self, from: $0) })
    switch try await writer.write(write) {
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

/// A write the api took whose answer could not be read back: done, not to be made again.
struct OperationWriteApplied: Error, CustomStringConvertible {
  let operation: String
  let problem: String
  var description: String {
    "\(operation) was applied by the api, but its answer could not be read (\(problem)); do not"
      + " send it again."
  }
}

extension WriteSender {
  /// Sends a kept write as `.api` does, its answer's bytes the whole `OperationAnswer` (status,
  /// header fields, body) as JSON, so a generated client gets the response as the api gave it.
  public static func operation(_ client: ApiClient) -> WriteSender {
    sending(client) { response in
      try JSONEncoder().encode(
        OperationAnswer(
          status: response.status, headerFields: response.headerFields, body: response.body))
    }
  }
}
