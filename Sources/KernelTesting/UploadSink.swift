import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A loopback HTTP/1.1 server on plain sockets that reads request bodies of any size as they
/// arrive, keeping only their length, a digest and their first bytes: what an upload of any
/// size is checked against, with its own memory flat. It answers each request `{"bytes": N}`
/// and closes the connection.
public final class UploadSink: Sendable {
  /// One request as it arrived.
  public struct Received: Sendable {
    /// The request line and header fields, as sent.
    public let head: String
    /// How many body bytes arrived.
    public let bytes: Int
    /// `UploadSink.digest` of the whole body.
    public let digest: UInt64
    /// The body's first 4 KB.
    public let prefix: Data
  }

  /// The loopback port it listens on.
  public let port: UInt16
  private let listener: Int32
  private let received = Mutex<[Received]>([])

  /// Listens on a free loopback port.
  public init() throws {
    (listener, port) = try loopbackListener()
    acceptingConnections(on: listener) { [self] in serve($0) }
  }

  /// `http://127.0.0.1:PORT/api/`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/api/") ?? URL(filePath: "/") }

  /// Every request read whole, in order.
  public var requests: [Received] { received.withLock { $0 } }

  /// Stops accepting.
  public func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

  /// FNV-1a (64 bits) of `bytes`, continuing from `digest`: a body digested a chunk at a
  /// time equals it digested whole.
  public static func digest(
    _ bytes: some Sequence<UInt8>, from digest: UInt64 = 0xcbf2_9ce4_8422_2325
  ) -> UInt64 {
    var digest = digest
    for byte in bytes { digest = (digest ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return digest
  }

  private func serve(_ connection: Int32) {
    var buffer = [UInt8]()
    var chunk = [UInt8](repeating: 0, count: 256 << 10)
    let separator = Array("\r\n\r\n".utf8)
    while buffer.firstRange(of: separator) == nil {
      let count = recv(connection, &chunk, chunk.count, 0)
      if count <= 0 { return }
      buffer.append(contentsOf: chunk[..<count])
    }
    guard let end = buffer.firstRange(of: separator) else { return }
    let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
    var body = Array(buffer[end.upperBound...])
    let length =
      head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
      .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
    var bytes = body.count
    var digest = Self.digest(body)
    var prefix = Data(body.prefix(4096))
    while bytes < length {
      let count = recv(connection, &chunk, min(chunk.count, length - bytes), 0)
      if count <= 0 { return }
      body = Array(chunk[..<count])
      digest = Self.digest(body, from: digest)
      if prefix.count < 4096 { prefix.append(contentsOf: body.prefix(4096 - prefix.count)) }
      bytes += count
    }
    received.withLock {
      $0.append(Received(head: head, bytes: bytes, digest: digest, prefix: prefix))
    }
    let answer = #"{"bytes": \#(bytes)}"#
    let response =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answer.utf8.count)"
      + "\r\nConnection: close\r\n\r\n" + answer
    #if canImport(Darwin)
      let flags: Int32 = 0
    #else
      let flags = Int32(MSG_NOSIGNAL)
    #endif
    _ = response.withCString { send(connection, $0, strlen($0), flags) }
  }
}
