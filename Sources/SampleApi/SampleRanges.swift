import Foundation

/// How a server answers a GET for a body of `length` bytes with `etag`, by its `Range` and
/// `If-Range` (RFC 9110 §14): the whole body (200) when no range is asked for, when the range is
/// not one this reads (a list of ranges, a malformed one: the header is ignored, as §14.2
/// allows) or when `If-Range` names another validator; the part asked for (206, with
/// `Content-Range`): `bytes=N-M` (M past the end means the end), `bytes=N-` or the last S bytes
/// (`bytes=-S`); or 416 when it asks for nothing the body has (from past its end, or the last 0
/// bytes). An app's sample api answers a download by it (the movie example's posters), and so
/// do tests' own download servers.
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
    let current = request["if-range"].map { $0 == etag } ?? true
    guard let spec = request["range"].flatMap(Self.spec), current else {
      headers["Content-Length"] = "\(length)"
      self.init(status: 200, offset: 0, count: length, headers: headers)
      return
    }
    guard let (first, last) = Self.bounds(of: spec, length: length) else {
      headers["Content-Range"] = "bytes */\(length)"
      headers["Content-Length"] = "0"
      self.init(status: 416, offset: 0, count: 0, headers: headers)
      return
    }
    headers["Content-Range"] = "bytes \(first)-\(last)/\(length)"
    headers["Content-Length"] = "\(last - first + 1)"
    self.init(status: 206, offset: first, count: last - first + 1, headers: headers)
  }

  /// One range as `Range: bytes=…` names it.
  enum Spec: Equatable {
    /// `N-M`, or `N-` (`last` nil).
    case from(first: Int, last: Int?)
    /// `-S`: the last S bytes.
    case suffix(Int)
  }

  /// The one range `value` asks for; nil for anything this does not read: another unit, a list,
  /// a sign or a space among the digits, a last byte before the first.
  static func spec(_ value: String) -> Spec? {
    guard value.hasPrefix("bytes=") else { return nil }
    let range = value.dropFirst("bytes=".count)
    guard let dash = range.firstIndex(of: "-") else { return nil }
    let before = range[..<dash]
    let after = range[range.index(after: dash)...]
    let number = { (digits: Substring) -> Int? in
      guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
      return Int(digits)
    }
    if before.isEmpty { return number(after).map(Spec.suffix) }
    guard let first = number(before) else { return nil }
    if after.isEmpty { return .from(first: first, last: nil) }
    guard let last = number(after), last >= first else { return nil }
    return .from(first: first, last: last)
  }

  /// The first and last byte `spec` names in a body of `length` bytes; nil when it names none.
  static func bounds(of spec: Spec, length: Int) -> (Int, Int)? {
    switch spec {
    case .from(let first, let last):
      guard first < length else { return nil }
      return (first, min(last ?? length - 1, length - 1))
    case .suffix(let count):
      guard count > 0, length > 0 else { return nil }
      return (max(0, length - count), length - 1)
    }
  }

  private init(status: Int, offset: Int, count: Int, headers: [String: String]) {
    self.status = status
    self.offset = offset
    self.count = count
    self.headers = headers
  }

  /// The byte at `index` of the made-up body numbered `id`: the same every run, different at
  /// every offset of a 251-byte cycle, so a part out of place does not match.
  public static func byte(at index: Int, of id: Int) -> UInt8 {
    UInt8(truncatingIfNeeded: (index + id * 7) % 251)
  }

  /// `count` bytes of the made-up body numbered `id` from `offset`, made as they are sent: one
  /// run of whole cycles made once, each chunk copied out of it.
  public static func generated(_ offset: Int, _ count: Int, of id: Int) -> GeneratedBody {
    let cycles = bytes(0, min(count, GeneratedBody.chunkSize) + 251, of: id)
    return GeneratedBody(length: count) { from, size in
      var chunk = Data(capacity: size)
      var at = offset + from
      while chunk.count < size {
        let start = at % 251
        let taken = min(size - chunk.count, cycles.count - start)
        chunk.append(cycles[start..<start + taken])
        at += taken
      }
      return chunk
    }
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
