import Foundation
import SampleApi
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A loopback HTTP/1.1 server on plain sockets that serves one download at every path: a body
/// of `length` made-up bytes (`SampleRange.bytes`, body 1's) with an `ETag`, honouring `Range`
/// and `If-Range` as the sample api does. It counts the body bytes it sends, and misbehaves on
/// purpose when told: it ignores ranges, announces a wrong total, drops its next answer's
/// connection after some bytes, or holds its next answer after some bytes (until `release()`),
/// so a test can kill a client mid-transfer. One request
/// per connection.
public final class DownloadSource: Sendable {
  /// How it answers, changed between requests with `update(_:)`.
  public struct Settings: Sendable {
    /// The body's length, fixed when the source is made.
    public var length: Int
    /// The body's version, sent as `ETag` and checked against `If-Range`.
    public var etag = "\"v1\""
    /// False: every answer is a 200 with the whole body, whatever range is asked.
    public var honoursRange = true
    /// A total in a 206's `Content-Range` other than the body's length.
    public var announcedTotal: Int?
    /// The next answer stops after this many body bytes until `release()`.
    public var holdAfter: Int?
    /// The next answer closes its connection after this many body bytes.
    public var dropAfter: Int?
    /// Answer 401 to requests whose `Authorization` is not this, when set.
    public var requiredAuthorization: String?

    /// A body of `length` bytes, answered whole or by range.
    public init(length: Int) { self.length = length }
  }

  /// The loopback port it listens on.
  public let port: UInt16
  private let listener: Int32
  private let state: Mutex<State>
  private let held = DispatchSemaphore(value: 0)

  private struct State {
    var settings: Settings
    var bytesSent = 0
    var requests: [[String: String]] = []
    var holding = false
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  /// The whole body, made once.
  private let whole: Data

  /// Listens on a free loopback port, answering as `settings` say.
  public init(_ settings: Settings) throws {
    state = Mutex(State(settings: settings))
    whole = SampleRange.bytes(0, settings.length, of: 1)
    (listener, port) = try loopbackListener()
    acceptingConnections(on: listener) { [self] in serve($0) }
  }

  deinit {
    // The accepting thread closes it once it stops.
    shutdown(listener, Int32(SHUT_RDWR))
    held.signal()
  }

  /// `http://127.0.0.1:PORT/api/`.
  public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)/api/") ?? URL(filePath: "/") }

  /// The body bytes sent so far, over every answer.
  public var bytesSent: Int { state.withLock { $0.bytesSent } }

  /// Each request's header fields (lower-cased names), in order.
  public var requests: [[String: String]] { state.withLock { $0.requests } }

  /// Changes how the next requests are answered.
  public func update(_ change: (inout Settings) -> Void) { state.withLock { change(&$0.settings) } }

  /// Returns once an answer is held (`Settings.holdAfter` reached).
  public func held() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state in
        if !state.holding { state.waiting.append(continuation) }
        return state.holding
      }
      if now { continuation.resume() }
    }
  }

  /// Lets a held answer go on.
  public func release() { held.signal() }

  /// The whole body.
  public func body() -> Data { whole }

  private func serve(_ connection: Int32) {
    guard let headers = readHead(connection) else { return }
    let settings = state.withLock { state in
      state.requests.append(headers)
      return state.settings
    }
    if let required = settings.requiredAuthorization, headers["authorization"] != required {
      _ = put(connection, head(401, ["Content-Length": "0", "WWW-Authenticate": "Bearer"]))
      return
    }
    let range = SampleRange(
      length: settings.length, etag: settings.etag,
      headers: settings.honoursRange ? headers : headers.filter { $0.key != "range" })
    var fields = range.headers
    if let total = settings.announcedTotal, range.status == 206 {
      fields["Content-Range"] = "bytes \(range.offset)-\(range.offset + range.count - 1)/\(total)"
    }
    fields["Content-Type"] = "application/octet-stream"
    guard put(connection, head(range.status, fields)) else { return }
    var offset = range.offset
    let end = range.offset + range.count
    var sentHere = 0
    while offset < end {
      var chunk = min(64 << 10, end - offset)
      let (hold, drop) = state.withLock { ($0.settings.holdAfter, $0.settings.dropAfter) }
      if let hold { chunk = min(chunk, max(0, hold - sentHere)) }
      if let drop {
        chunk = min(chunk, max(0, drop - sentHere))
        if chunk == 0 {
          state.withLock { $0.settings.dropAfter = nil }
          return
        }
      }
      if chunk == 0 {
        let waiting = state.withLock { state in
          state.holding = true
          state.settings.holdAfter = nil
          defer { state.waiting = [] }
          return state.waiting
        }
        for waiter in waiting { waiter.resume() }
        held.wait()
        state.withLock { $0.holding = false }
        continue
      }
      guard put(connection, whole.subdata(in: offset..<offset + chunk)) else { return }
      state.withLock { $0.bytesSent += chunk }
      offset += chunk
      sentHere += chunk
    }
  }

  private func head(_ status: Int, _ fields: [String: String]) -> Data {
    var text = "HTTP/1.1 \(status) \(status == 206 ? "Partial Content" : "Answer")\r\n"
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
    return Data((text + "Connection: close\r\n\r\n").utf8)
  }

  /// The request's header fields, read up to the blank line; nil when the client went away.
  private func readHead(_ connection: Int32) -> [String: String]? {
    var bytes = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while bytes.range(of: Data("\r\n\r\n".utf8)) == nil {
      let count = recv(connection, &buffer, buffer.count, 0)
      guard count > 0 else { return nil }
      bytes.append(contentsOf: buffer[..<count])
    }
    var fields: [String: String] = [:]
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\r\n").dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...]
        .trimmingCharacters(in: .whitespaces)
    }
    return fields
  }

  /// Writes all of `data`; false when the client went away.
  private func put(_ connection: Int32, _ data: Data) -> Bool {
    data.withUnsafeBytes { buffer in
      var sent = 0
      while sent < buffer.count {
        #if canImport(Glibc)
          let flags = Int32(MSG_NOSIGNAL)
        #else
          let flags: Int32 = 0
        #endif
        guard let base = buffer.baseAddress else { return false }
        let count = send(connection, base + sent, buffer.count - sent, flags)
        guard count > 0 else { return false }
        sent += count
      }
      return true
    }
  }
}
