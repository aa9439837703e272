import Api
import Foundation
import SampleApi

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension InProcessTransport {
  /// The `sample` environment's transport: the bundled API answering in process, so the default
  /// profile needs no network and no other process.
  public static func sample(_ responder: SampleApiResponder = SampleApiResponder())
    -> InProcessTransport
  {
    InProcessTransport { request in
      let sample = SampleRequest(
        method: request.httpMethod ?? "GET", path: request.url?.path ?? "/",
        headers: request.allHTTPHeaderFields ?? [:], body: request.httpBody ?? Data())
      let response = await responder.respond(to: sample)
      return ApiResponse(status: response.status, headers: response.headers, body: response.body)
    }
  }
}
