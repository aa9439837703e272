import Foundation

/// How a server answers a GET for a body of `length` bytes with `etag`, by its `Range` and
/// `If-Range` (RFC 9110): the whole body (200) when no single range is asked for or `If-Range`
/// names another validator, the part from the first byte asked (206, `Content-Range`), or 416
/// past the end. An app's sample api answers a download by it (the movie example's posters),
/// and so do tests' own download servers.
public struct SampleRange: Sendable, Equatable {
  /// 200, 206 or 416.
  public var status: Int
  /// The bytes sent: `offset..<offset + count` of the body.
  public var offset: Int
  /// How many bytes are sent.
  public var count: Int
  /// The headers to answer with: `ETag`, `Accept-Ranges`, `Content-Length`, `Content-Range`.
  public var headers: [String: String]

  /// The answer to a request with `headers` (lower-cased names) for a body of `length` bytes whose
  /// version is `etag`.
  public init(length: Int, etag: String, headers request: [String: String]) {
    var headers = ["ETag": etag, "Accept-Ranges": "bytes"]
    let range = request["range"].flatMap(Self.firstByte)
    let current = request["if-range"].map { $0 == etag } ?? true
    guard let first = range, current else {
      headers["Content-Length"] = "\(length)"
      self.init(status: 200, offset: 0, count: length, headers: headers)
      return
    }
    guard first < length else {
      headers["Content-Range"] = "bytes */\(length)"
      headers["Content-Length"] = "0"
      self.init(status: 416, offset: 0, count: 0, headers: headers)
      return
    }
    headers["Content-Range"] = "bytes \(first)-\(length - 1)/\(length)"
    headers["Content-Length"] = "\(length - first)"
    self.init(status: 206, offset: first, count: length - first, headers: headers)
  }

  private init(status: Int, offset: Int, count: Int, headers: [String: String]) {
    self.status = status
    self.offset = offset
    self.count = count
    self.headers = headers
  }

  /// The first byte of `bytes=N-` or `bytes=N-M`; nil for anything else (a suffix, a list).
  static func firstByte(_ value: String) -> Int? {
    guard value.hasPrefix("bytes="), !value.contains(",") else { return nil }
    let spec = value.dropFirst("bytes=".count)
    guard let dash = spec.firstIndex(of: "-") else { return nil }
    return Int(spec[..<dash])
  }

  /// The byte at `index` of the made-up body numbered `id`: the same every run, different at
  /// every offset of a 251-byte cycle, so a part out of place does not match.
  public static func byte(at index: Int, of id: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: (index + id * 7) % 251)
  }

  /// `count` bytes of the made-up body numbered `id` from `offset`: whole cycles copied, about a
  /// megabyte at a time.
  public static func bytes(_ offset: Int, _ count: Int, of id: Int) -> Data {
    let block = (0..<min(count, 251 * 4096)).map { byte(at: offset + $0, of: id) }
    var data = Data(capacity: count)
    while data.count < count {
      data.append(contentsOf: block.prefix(count - data.count))
    }
    return data
  }
}
