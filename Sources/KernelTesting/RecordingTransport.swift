import Api
import Foundation
import HTTPTypes

/// A transport that records every request it is given, then hands it to another transport (or
/// answers it with a closure): what was sent, with which headers, in which order.
public struct RecordingTransport: Transport {
  /// Every request sent, in order.
  public let requests = Recorder<HTTPRequest>()
  /// The body of every request sent, in order (nil for none).
  public let bodies = Recorder<Data?>()
  private let base: any Transport

  /// Records, then sends through `base`.
  public init(_ base: any Transport) { self.base = base }

  /// Records, then answers with `handler`, in process.
  public init(answering handler: @escaping InProcessTransport.Handler) {
    base = InProcessTransport(handler)
  }

  public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
    requests.append(request)
    bodies.append(try? body?.data())
    return try await base.send(request, body: body)
  }

  public func checkAvailability() throws { try base.checkAvailability() }
}
