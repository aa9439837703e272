import Domain
import Foundation

/// A request's body as the encoders make it: its bytes, in parts read in order as the body is
/// sent (a file is read from disk a chunk at a time, never whole), and the `Content-Type` the
/// encoder chose, set on the request unless the route set one.
///
/// ```swift
/// Route.post("issues", body: try .json(NewIssue(title: "Crash"), encoder: mapping.encoder()))
/// Route.post("login", body: .form([URLQueryItem(name: "user", value: "a b")]))
/// Route.post("attachments", body: .multipart([
///   .field("title", "Screenshot"),
///   .file("upload", at: URL(filePath: "/tmp/shot.png"), contentType: "image/png"),
/// ]))
/// ```
public struct RequestBody: Sendable, Hashable {
  /// A run of the body's bytes: in memory, or a file's contents read when it is sent.
  public enum Part: Sendable, Hashable {
    /// These bytes.
    case bytes(Data)
    /// This file's contents, read as they are sent.
    case file(URL)
  }

  /// The body's bytes, in order.
  public var parts: [Part]
  /// Its `Content-Type`; nil for none.
  public var contentType: String?
  /// Told how much of the body was sent (`reportingProgress`).
  var progress: ProgressObserver?

  /// A body of `parts`, of `contentType`.
  public init(parts: [Part], contentType: String?) {
    self.parts = parts
    self.contentType = contentType
  }

  /// The same body, telling `observer` the bytes sent and the body's length as it is sent: at
  /// most every 100 ms, at the start and at the end (from 0 again when a retry or a redirect
  /// sends it again).
  ///
  /// ```swift
  /// .post("attachments", body: .multipart([.file("upload", at: video)])
  ///   .reportingProgress { print($0) })  // 12.5 MB of 50.0 MB (25%)
  /// ```
  public func reportingProgress(_ observer: @escaping @Sendable (TransferProgress) -> Void)
    -> RequestBody
  {
    var body = self
    body.progress = ProgressObserver(observer)
    return body
  }

  /// Two bodies of the same bytes and type are equal, whoever hears their progress.
  public static func == (lhs: RequestBody, rhs: RequestBody) -> Bool {
    lhs.parts == rhs.parts && lhs.contentType == rhs.contentType
  }

  public func hash(into hasher: inout Hasher) {
    hasher.combine(parts)
    hasher.combine(contentType)
  }

  /// Who hears a body's progress: not part of what the body is.
  struct ProgressObserver: Sendable, Hashable {
    let tell: @Sendable (TransferProgress) -> Void

    init(_ tell: @escaping @Sendable (TransferProgress) -> Void) { self.tell = tell }

    static func == (lhs: Self, rhs: Self) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
  }

  /// Bytes as they are, with the content type given (none: the route's, or none at all).
  public static func bytes(_ data: Data, contentType: String? = nil) -> RequestBody {
    RequestBody(parts: [.bytes(data)], contentType: contentType)
  }

  /// A file's contents as they are, read as it is sent.
  public static func file(_ url: URL, contentType: String = "application/octet-stream")
    -> RequestBody
  {
    RequestBody(parts: [.file(url)], contentType: contentType)
  }

  /// `value` as JSON by `encoder` (an api's `JSONMapping.encoder()` gives its date and key
  /// strategies), as `application/json`.
  public static func json(
    _ value: some Encodable, encoder: JSONEncoder = JSONMapping.body.encoder()
  ) throws -> RequestBody {
    .bytes(try encoder.encode(value), contentType: "application/json")
  }

  /// Fields as `application/x-www-form-urlencoded`: names and values percent-encoded as HTML
  /// forms do (a space is `+`; `+`, `&`, `=` and everything but letters, digits and `*-._` are
  /// `%XX`), so a server's form parser reads them back as written.
  public static func form(_ fields: [URLQueryItem]) -> RequestBody {
    let text = fields.map { Self.formEncoded($0.name) + "=" + Self.formEncoded($0.value ?? "") }
      .joined(separator: "&")
    return .bytes(Data(text.utf8), contentType: "application/x-www-form-urlencoded")
  }

  private static let formAllowed = CharacterSet(
    charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789*-._ ")

  static func formEncoded(_ text: String) -> String {
    (text.addingPercentEncoding(withAllowedCharacters: formAllowed) ?? "")
      .replacingOccurrences(of: " ", with: "+")
  }

  /// One field of a `multipart/form-data` body.
  public struct Field: Sendable, Hashable {
    let name: String
    let filename: String?
    let contentType: String?
    let content: Part

    /// A text field.
    public static func field(_ name: String, _ value: String) -> Field {
      Field(name: name, filename: nil, contentType: nil, content: .bytes(Data(value.utf8)))
    }

    /// A file, streamed from disk when the body is sent; `filename` defaults to its name.
    public static func file(
      _ name: String, at url: URL, filename: String? = nil,
      contentType: String = "application/octet-stream"
    ) -> Field {
      Field(
        name: name, filename: filename ?? url.lastPathComponent, contentType: contentType,
        content: .file(url))
    }

    /// Bytes sent as a file named `filename`.
    public static func data(
      _ name: String, _ data: Data, filename: String,
      contentType: String = "application/octet-stream"
    ) -> Field {
      Field(name: name, filename: filename, contentType: contentType, content: .bytes(data))
    }
  }

  /// Fields and files as `multipart/form-data` (RFC 7578), each file streamed from disk when
  /// the body is sent. `boundary` is a fresh random one unless given.
  public static func multipart(_ fields: [Field], boundary: String? = nil) -> RequestBody {
    let boundary = boundary ?? "kernel-" + UUID().uuidString
    var parts: [Part] = []
    var pending = Data()
    for field in fields {
      var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(quoted(field.name))\""
      if let filename = field.filename { head += "; filename=\"\(quoted(filename))\"" }
      if let type = field.contentType { head += "\r\nContent-Type: \(type)" }
      pending.append(Data((head + "\r\n\r\n").utf8))
      switch field.content {
      case .bytes(let data): pending.append(data)
      case .file(let url):
        parts.append(.bytes(pending))
        parts.append(.file(url))
        pending = Data()
      }
      pending.append(Data("\r\n".utf8))
    }
    pending.append(Data("--\(boundary)--\r\n".utf8))
    parts.append(.bytes(pending))
    return RequestBody(parts: parts, contentType: "multipart/form-data; boundary=\(boundary)")
  }

  /// A name as a quoted string of a `Content-Disposition`, as HTML forms write it: `"` and line
  /// breaks percent-encoded.
  private static func quoted(_ name: String) -> String {
    name.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
      .replacingOccurrences(of: "\n", with: "%0A")
  }

  /// No byte at all (files by their size now).
  public var isEmpty: Bool { (try? length()) == 0 }

  /// Its length in bytes, files by their size now.
  public func length() throws -> Int64 {
    try parts.reduce(0) { total, part in
      switch part {
      case .bytes(let data): return total + Int64(data.count)
      case .file(let url):
        do {
          let size = try FileManager.default.attributesOfItem(atPath: url.path)[.size]
          return total + ((size as? NSNumber)?.int64Value ?? 0)
        } catch {
          throw BodyUnreadable(file: url.path, reason: "it cannot be read")
        }
      }
    }
  }

  /// The whole body in memory: for a transport that answers in process, or a small body.
  public func data() throws -> Data {
    var data = Data()
    let reader = BodyReader(self)
    var chunk = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let count = try chunk.withUnsafeMutableBytes { try reader.read(into: $0) }
      if count == 0 { return data }
      data.append(contentsOf: chunk[..<count])
    }
  }
}

/// A body part that could not be read when it was sent: its file is gone or unreadable.
struct BodyUnreadable: Error, Sendable, CustomStringConvertible {
  /// The file.
  public let file: String
  /// Why it could not be read.
  public let reason: String
  public var description: String { "the body's file \(file) could not be read: \(reason)" }
}

/// Reads a body's parts in order, a chunk at a time, opening each file when it is reached; it
/// can start over (a transport rewinds it to send the body again). Not for concurrent use: one
/// transfer reads it, on one thread at a time.
final class BodyReader {
  private let parts: [RequestBody.Part]
  private var index = 0
  private var offset = 0
  private var file: FileHandle?
  /// The bytes read since the start, the body's length, and who hears them.
  private var sent: Int64 = 0
  private let length: Int64?
  private let progress: ProgressTeller?

  /// A reader at the start of `body`.
  public init(_ body: RequestBody) {
    parts = body.parts
    progress = body.progress.map { ProgressTeller($0.tell) }
    length = body.progress == nil ? nil : try? body.length()
  }

  deinit { try? file?.close() }

  /// Starts over from the first byte.
  public func rewind() {
    try? file?.close()
    file = nil
    index = 0
    offset = 0
    sent = 0
  }

  /// Fills `buffer` with the next bytes, at most its size; 0 at the end. Safe as long as
  /// `buffer` is writable memory of its count for the call (libcurl's read buffer is).
  public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    let count = try next(into: buffer)
    if let progress {
      let first = sent == 0
      sent += Int64(count)
      let last = count == 0 || sent == length
      progress(TransferProgress(completed: sent, expected: length), always: first || last)
    }
    return count
  }

  private func next(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
    while index < parts.count {
      switch parts[index] {
      case .bytes(let data):
        let count = min(buffer.count, data.count - offset)
        if count > 0 {
          let start = data.startIndex + offset
          buffer.copyBytes(from: data[start..<(start + count)])
          offset += count
          return count
        }
      case .file(let url):
        if file == nil {
          do { file = try FileHandle(forReadingFrom: url) } catch {
            throw BodyUnreadable(file: url.path, reason: "it cannot be opened")
          }
        }
        let chunk: Data?
        do { chunk = try file?.read(upToCount: buffer.count) } catch {
          throw BodyUnreadable(file: url.path, reason: fileSystemReason(error))
        }
        if let chunk, !chunk.isEmpty {
          buffer.copyBytes(from: chunk)
          return chunk.count
        }
        try? file?.close()
        file = nil
      }
      index += 1
      offset = 0
    }
    return 0
  }
}
