import Api
import Foundation
import HTTPTypes

extension InProcessTransport {
  /// The `sample` environment's transport: the bundled API answering in process, so the default
  /// profile needs no network and no other process.
  public static func sample(_ responder: SampleApiResponder = SampleApiResponder())
    -> InProcessTransport
  {
    InProcessTransport { request, body in
      var headers: [String: String] = [:]
      for field in request.headerFields { headers[field.name.canonicalName] = field.value }
      let sample = SampleRequest(
        method: request.method.rawValue, path: request.path ?? "/", headers: headers,
        body: body ?? Data())
      let response = await responder.respond(to: sample)
      return ApiResponse(status: response.status, headers: response.headers, body: response.body)
    }
  }
}
