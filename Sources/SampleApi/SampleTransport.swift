import Api
import Foundation
import HTTPTypes

extension InProcessTransport {
  /// An app's sample api answering in process (a `sample` environment's transport): no
  /// network and no other process.
  public static func sample(_ responder: SampleApiResponder) -> InProcessTransport {
    InProcessTransport { request, body in
      var headers: [String: String] = [:]
      for field in request.headerFields { headers[field.name.canonicalName] = field.value }
      let sample = SampleRequest(
        method: request.method.rawValue, path: request.path ?? "/", headers: headers,
        body: body ?? Data())
      let response = await responder.respond(to: sample)
      return ApiResponse(
        status: response.status, headers: response.headers,
        body: response.generated?.whole ?? response.body)
    }
  }
}
