import Foundation

/// HTTP/1.1 as the fixture server reads and writes it: a request head and a `Content-Length`
/// body in, one write per response out. Chunked request bodies are refused (no client of
/// Kernel's sends one).
enum HTTPWire {
  /// The most a request head may take, and the most its body may.
  static let headLimit = 64 << 10
  static let bodyLimit = 8 << 20

  /// A request read off a connection, and whether the connection stays open after it.
  struct Parsed {
    var request: SampleRequest
    var keepAlive: Bool
  }

  /// Why a request cannot be read: answered with `status` and the connection closed.
  struct Refusal: Error {
    var status: Int
    var message: String
  }

  /// The byte offset just past `\r\n\r\n` in `bytes`, if the head is complete.
  static func headEnd(in bytes: [UInt8]) -> Int? {
    guard bytes.count >= 4 else { return nil }
    for index in 3..<bytes.count
    where bytes[index] == 10 && bytes[index - 1] == 13 && bytes[index - 2] == 10
      && bytes[index - 3] == 13
    {
      return index + 1
    }
    return nil
  }

  /// The request line and header fields of `head`, and the body length they promise.
  static func parseHead(_ head: ArraySlice<UInt8>) throws -> (Parsed, bodyLength: Int) {
    let text = String(decoding: head, as: UTF8.self)
    var lines = text.components(separatedBy: "\r\n").filter { !$0.isEmpty }
    guard !lines.isEmpty else { throw Refusal(status: 400, message: "an empty request") }
    let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: false)
    guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else {
      throw Refusal(status: 400, message: "a request line that is not HTTP/1.x")
    }
    var headers: [String: String] = [:]
    for line in lines {
      guard let colon = line.firstIndex(of: ":") else {
        throw Refusal(status: 400, message: "a header line without a colon")
      }
      let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
      let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      headers[name] = headers[name].map { "\($0), \(value)" } ?? value
    }
    if headers["transfer-encoding"] != nil {
      throw Refusal(status: 501, message: "chunked request bodies are not supported")
    }
    let length = Int(headers["content-length"] ?? "0") ?? -1
    guard length >= 0 else { throw Refusal(status: 400, message: "a bad Content-Length") }
    guard length <= bodyLimit else {
      throw Refusal(status: 413, message: "a body over \(bodyLimit) bytes")
    }
    let target = String(requestLine[1])
    let connection = headers["connection"]?.lowercased() ?? ""
    let keepAlive =
      requestLine[2] == "HTTP/1.1"
      ? !connection.contains("close") : connection.contains("keep-alive")
    let request = SampleRequest(
      method: String(requestLine[0]), path: target,
      headers: headers)
    return (Parsed(request: request, keepAlive: keepAlive), length)
  }

  /// The bytes of `response`: status line, its headers, `Content-Length`, `Connection`, body
  /// (a generated body is not in them: the server sends it after, a chunk at a time).
  static func encode(_ response: SampleResponse, keepAlive: Bool, head: Bool) -> Data {
    var text = "HTTP/1.1 \(response.status) \(phrase(response.status))\r\n"
    for (name, value) in response.headers.sorted(by: { $0.key < $1.key })
    where !["content-length", "connection"].contains(name.lowercased()) {
      text += "\(name): \(value)\r\n"
    }
    text += "Content-Length: \(response.bodyLength)\r\n"
    text += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
    var data = Data(text.utf8)
    if !head && response.generated == nil { data.append(response.body) }
    return data
  }

  static func phrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 303: "See Other"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 413: "Content Too Large"
    case 429: "Too Many Requests"
    case 431: "Request Header Fields Too Large"
    case 500: "Internal Server Error"
    case 501: "Not Implemented"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }
}
