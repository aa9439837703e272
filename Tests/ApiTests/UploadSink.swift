import CCompression
import Foundation
import KernelTesting
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A loopback HTTP/1.1 server on plain sockets that reads request bodies of any size as they
/// arrive, keeping only their length, their CRC-32 and their first bytes: what a 50 MB
/// upload is checked against. It answers each request `{"bytes": N}` and closes.
final class UploadSink: Sendable {
  struct Received: Sendable {
    let head: String
    let bytes: Int
    let digest: UInt64
    /// The body's first 4 KB.
    let prefix: Data
  }

  let port: UInt16
  private let listener: Int32
  private let received = Mutex<[Received]>([])

  init() throws {
    (listener, port) = try loopbackListener()
    Thread.detachNewThread { [self] in
      while true {
        let connection = accept(listener, nil, nil)
        if connection < 0 { break }
        Thread.detachNewThread { [self] in
          serve(connection)
          close(connection)
        }
      }
      close(listener)
    }
  }

  var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/api/") ?? URL(filePath: "/") }

  var requests: [Received] { received.withLock { $0 } }

  func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

  /// zlib's CRC-32 of `bytes`, continuing from `digest`.
  static func digest(_ bytes: some ContiguousBytes, from digest: UInt64 = 0) -> UInt64 {
    bytes.withUnsafeBytes { buffer in
      UInt64(
        crc32(
          uLong(digest), buffer.baseAddress?.assumingMemoryBound(to: Bytef.self),
          uInt(buffer.count)))
    }
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
    _ = response.withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
  }
}
