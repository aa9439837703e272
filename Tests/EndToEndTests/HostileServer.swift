import Foundation
import KernelTesting
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A loopback HTTP/1.1 server that misbehaves on purpose, written on plain sockets so it can
/// send what no well-behaved server library would: a body that never ends, a `Content-Length`
/// it does not honour, any status and header. It records every request it reads.
final class HostileServer: Sendable {
  struct Request: Sendable {
    let method: String
    let path: String
    /// Header names lowercased.
    let headers: [String: String]
  }

  enum Answer: Sendable {
    case send(status: Int, headers: [String: String] = [:], body: Data = Data())
    /// A head promising `promised` bytes, then `chunk` every `interval`, until the client goes.
    case drip(promised: Int, chunk: Data, interval: Duration)
  }

  let host: String
  let port: UInt16
  private let listener: Int32
  private let answer: @Sendable (Request) -> Answer
  private let state = Mutex<(requests: [Request], connections: Set<Int32>, stopped: Bool)>(
    ([], [], false))

  /// Listens on `host` (a loopback address), on a port the system picks.
  init(host: String = "127.0.0.1", answer: @escaping @Sendable (Request) -> Answer) throws {
    self.host = host
    self.answer = answer
    (listener, port) = try loopbackListener(host: host)
    Thread.detachNewThread { [self] in acceptLoop() }
  }

  var baseURL: String { "http://\(host):\(port)/api/" }

  var requests: [Request] { state.withLock { $0.requests } }

  /// Stops accepting and hangs up on every open connection.
  func stop() {
    let open = state.withLock { state -> Set<Int32> in
      state.stopped = true
      return state.connections
    }
    shutdown(listener, Int32(SHUT_RDWR))
    for connection in open { shutdown(connection, Int32(SHUT_RDWR)) }
  }

  private var stopped: Bool { state.withLock { $0.stopped } }

  private func acceptLoop() {
    while true {
      let connection = accept(listener, nil, nil)
      if connection < 0 {
        if stopped || (errno != EINTR && errno != ECONNABORTED) { break }
        continue
      }
      let accepted = state.withLock { state -> Bool in
        if state.stopped { return false }
        state.connections.insert(connection)
        return true
      }
      guard accepted else {
        close(connection)
        break
      }
      Thread.detachNewThread { [self] in
        serve(connection)
        state.withLock { _ = $0.connections.remove(connection) }
        close(connection)
      }
    }
    close(listener)
  }

  /// Answers requests on one connection until the client or the server hangs up.
  private func serve(_ connection: Int32) {
    var buffer = [UInt8]()
    while let request = readRequest(connection, &buffer) {
      state.withLock { $0.requests.append(request) }
      switch answer(request) {
      case .send(let status, let headers, let body):
        var head = "HTTP/1.1 \(status) Hostile\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        guard write(connection, Data((head + "\r\n").utf8)), write(connection, body) else {
          return
        }
      case .drip(let promised, let chunk, let interval):
        let head = "HTTP/1.1 200 OK\r\nContent-Length: \(promised)\r\n\r\n"
        guard write(connection, Data(head.utf8)) else { return }
        // Pacing is the behaviour under test here, not a wait for something else to happen.
        while !stopped, write(connection, chunk) {
          Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18)
        }
        return
      }
    }
  }

  /// Reads one request head (and skips its body); nil when the connection ends.
  private func readRequest(_ connection: Int32, _ buffer: inout [UInt8]) -> Request? {
    let separator: [UInt8] = Array("\r\n\r\n".utf8)
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
      if let end = buffer.firstRange(of: separator) {
        let head = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
        buffer.removeSubrange(..<end.upperBound)
        let lines = head.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
          guard let colon = line.firstIndex(of: ":") else { continue }
          headers[line[..<colon].lowercased()] = line[line.index(after: colon)...]
            .trimmingCharacters(in: .whitespaces)
        }
        var remaining = Int(headers["content-length"] ?? "") ?? 0
        while remaining > 0 {
          if buffer.isEmpty {
            let count = recv(connection, &chunk, chunk.count, 0)
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
          }
          let taken = min(remaining, buffer.count)
          buffer.removeFirst(taken)
          remaining -= taken
        }
        return Request(
          method: parts.first.map(String.init) ?? "",
          path: parts.dropFirst().first.map(String.init) ?? "",
          headers: headers)
      }
      let count = recv(connection, &chunk, chunk.count, 0)
      if count <= 0 { return nil }
      buffer.append(contentsOf: chunk[..<count])
    }
  }

  /// Writes all of `data`; false once the peer is gone.
  private func write(_ connection: Int32, _ data: Data) -> Bool {
    data.withUnsafeBytes { bytes -> Bool in
      var offset = 0
      while offset < bytes.count {
        let sent = send(
          connection, bytes.baseAddress.map { $0 + offset }, bytes.count - offset,
          Int32(MSG_NOSIGNAL))
        if sent <= 0 { return false }
        offset += sent
      }
      return true
    }
  }
}
