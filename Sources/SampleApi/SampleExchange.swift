import Api
import Foundation

/// A request as the sample API sees it, whether it came over loopback HTTP or in process.
public struct SampleRequest: Sendable {
  /// The method, upper-cased (`GET`).
  public var method: String
  /// The path with its leading slash and without a query, e.g. `/api/books/1`.
  public var path: String
  /// Header values by lower-cased name.
  public var headers: [String: String]
  /// The request's body; empty for none.
  public var body: Data
  /// The query's values by name, percent-decoded (`?q=a%2Bb` is `["q": "a+b"]`); the last of
  /// a repeated name.
  public var query: [String: String]
  /// The values of the route pattern's `{name}` segments, by name: `["id": "7"]`.
  public var parameters: [String: String] = [:]

  /// A request for `path`, which may end in its query (`/api/books?page=2`).
  public init(
    method: String = "GET", path: String, headers: [String: String] = [:], body: Data = Data()
  ) {
    self.method = method.uppercased()
    let parts = URLComponents(string: "http://h" + path)
    self.query = Dictionary(
      (parts?.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
    let bare = String(path.prefix { $0 != "?" })
    self.path = parts == nil ? bare : bare.removingPercentEncoding ?? bare
    self.headers = Dictionary(
      headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $1 })
    self.body = body
  }
}

/// What the sample API answers.
public struct SampleResponse: Sendable {
  /// The HTTP status.
  public var status: Int
  /// Its headers, by name.
  public var headers: [String: String]
  /// Its body.
  public var body: Data
  /// A body made as it is sent, a chunk at a time, in place of `body`: a large download (a
  /// poster of hundreds of megabytes) served in bounded memory.
  public var generated: GeneratedBody?

  /// An answer of `status`, with `headers` and `body`.
  public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
    self.status = status
    self.headers = headers
    self.body = body
  }

  /// An answer of `status`, with `headers` and a body made as it is sent.
  public init(status: Int, headers: [String: String] = [:], generating body: GeneratedBody) {
    self.init(status: status, headers: headers)
    generated = body
  }

  /// How many bytes its body has.
  public var bodyLength: Int { generated?.length ?? body.count }

  /// A body sent as `text/html`, as the static hosts that serve such APIs do, whatever it holds.
  public static func staticFile(_ body: Data, status: Int = 200) -> SampleResponse {
    SampleResponse(
      status: status, headers: ["Content-Type": "text/html; charset=utf-8"], body: body)
  }

  /// `value` encoded as JSON, sent as `application/json`.
  public static func json(_ value: some Encodable, status: Int = 200) -> SampleResponse {
    encoded(value, status: status, type: "application/json")
  }

  /// `value` encoded as JSON, sent as `text/html` as a static host would (a sample api that
  /// mimics one: the movie example's).
  public static func staticJSON(_ value: some Encodable) -> SampleResponse {
    encoded(value, status: 200, type: "text/html; charset=utf-8")
  }

  private static func encoded(_ value: some Encodable, status: Int, type: String)
    -> SampleResponse
  {
    do {
      let body = try encoder.encode(value)
      return SampleResponse(status: status, headers: ["Content-Type": type], body: body)
    } catch {
      return .error(500, "could not encode: \(error)")
    }
  }

  /// Kernel's one JSON writer: keys sorted, dates as ISO 8601 with milliseconds.
  private static var encoder: JSONEncoder { JSONMapping.body.encoder() }

  /// `{"error": message}` with `status`, as the fixture server's own refusals are.
  public static func error(_ status: Int, _ message: String, headers: [String: String] = [:])
    -> SampleResponse
  {
    var all = headers
    all["Content-Type"] = "application/json"
    let body = (try? encoder.encode(["error": message])) ?? Data("{}".utf8)
    return SampleResponse(status: status, headers: all, body: body)
  }
}

/// A body of `length` bytes made a chunk at a time as it is sent: `chunk(offset, count)` makes
/// `count` bytes from `offset`. The loopback server sends it `chunkSize` bytes at a time.
public struct GeneratedBody: Sendable {
  /// How many bytes it has.
  public let length: Int
  /// Makes `count` bytes of it from `offset`.
  public let chunk: @Sendable (_ offset: Int, _ count: Int) -> Data

  /// The bytes a server makes and sends at a time.
  public static let chunkSize = 1 << 20

  /// A body of `length` bytes that `chunk` makes.
  public init(length: Int, chunk: @escaping @Sendable (_ offset: Int, _ count: Int) -> Data) {
    self.length = length
    self.chunk = chunk
  }

  /// Every byte at once, for an exchange in process.
  public var whole: Data { chunk(0, length) }
}
