import Foundation

/// A request as the sample API sees it, whether it came over loopback HTTP or in process.
public struct SampleRequest: Sendable {
  public var method: String
  /// The path with its leading slash and without a query, e.g. `/api/movies/1`.
  public var path: String
  /// Header values by lower-cased name.
  public var headers: [String: String]
  public var body: Data

  public init(
    method: String = "GET", path: String, headers: [String: String] = [:], body: Data = Data()
  ) {
    self.method = method.uppercased()
    self.path = path
    self.headers = Dictionary(
      headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    self.body = body
  }
}

/// What the sample API answers.
public struct SampleResponse: Sendable {
  public var status: Int
  public var headers: [String: String]
  public var body: Data

  public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// A body sent as `text/html`, as the static hosts that serve such APIs do, whatever it holds.
  static func staticFile(_ body: Data, status: Int = 200) -> SampleResponse {
    SampleResponse(
      status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: body)
  }

  static func error(_ status: Int, _ message: String, headers: [String: String] = [:])
    -> SampleResponse
  {
    var all = headers
    all["Content-Type"] = "application/json"
    let text = message.replacingOccurrences(of: "\"", with: "'")
    return SampleResponse(status: status, headers: all, body: Data("{\"error\": \"\(text)\"}".utf8))
  }
}
