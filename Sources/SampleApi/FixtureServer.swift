import Domain
import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An API over HTTP on a loopback port, for tests, benchmarks and `kernel serve`: the bundled
/// movie API, or any app's routes (`FixtureRoutes`: closures, or a folder of JSON files).
///
/// Tests can add routes (a redirect, a challenge, a slow body) with `handle`; they take
/// precedence over equal patterns. Latency, faults and required auth apply to every route.
public final class FixtureServer: Sendable {
  public let responder: SampleApiResponder
  public let port: UInt16
  private let host: Loopback.Address
  private let server: HTTPServer
  private let task: Task<Void, any Error>

  /// Starts serving on `host` (a loopback address: 127.0.0.1, another 127.x.y.z, ::1 or
  /// localhost), on `port` or, with 0, on a free port the system picks. A port that cannot be
  /// had (in use, privileged) fails at once with the system's reason.
  public static func start(
    options: SampleApiResponder.Options = .init(), routes: FixtureRoutes? = nil,
    host: String = "127.0.0.1", port: UInt16 = 0
  ) async throws -> FixtureServer {
    guard let loopback = Loopback.address(host) else {
      throw FixtureServerError.notLoopback(host: host)
    }
    let responder = SampleApiResponder(options: options, routes: routes)
    let routes = Handler(responder: responder)
    let pool = NoDelayPool(base: HTTPServer.defaultPool())
    let server: HTTPServer
    switch loopback {
    case .ip4(let ip):
      server = HTTPServer(
        address: try sockaddr_in.inet(ip4: ip, port: port), timeout: 60, pool: pool,
        logger: .disabled, handler: routes)
    case .ip6(let ip):
      server = HTTPServer(
        address: try sockaddr_in6.inet6(ip6: ip, port: port), timeout: 60, pool: pool,
        logger: .disabled, handler: routes)
    }
    let failure = Mutex<(any Error)?>(nil)
    let task = Task {
      do { try await server.run() } catch {
        failure.withLock { $0 = error }
        throw error
      }
    }
    // Listening, or the reason it cannot be: whichever comes first. The 60 s bound is a
    // deadline against a hang only; on a loaded machine listening can take seconds.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(60)
    while await !server.isListening {
      if let error = failure.withLock({ $0 }) {
        throw FixtureServerError.cannotListen(host: host, port: port, reason: reason(error))
      }
      guard clock.now < deadline else {
        task.cancel()
        throw FixtureServerError.cannotListen(host: host, port: port, reason: "timed out")
      }
      try await Task.sleep(for: .milliseconds(2))
    }
    let bound: UInt16
    switch await server.listeningAddress {
    case .ip4(_, let port)?, .ip6(_, let port)?: bound = port
    default:
      task.cancel()
      throw FixtureServerError.cannotListen(host: host, port: port, reason: "no address")
    }
    return FixtureServer(
      responder: responder, host: loopback, port: bound, server: server, task: task)
  }

  /// The system's words for why a socket could not listen ("Address already in use").
  private static func reason(_ error: any Error) -> String {
    if case SocketError.failed(_, _, let message) = error { return message }
    return "\(error)"
  }

  private init(
    responder: SampleApiResponder, host: Loopback.Address, port: UInt16, server: HTTPServer,
    task: Task<Void, any Error>
  ) {
    self.responder = responder
    self.host = host
    self.port = port
    self.server = server
    self.task = task
  }

  /// `http://127.0.0.1:PORT/api/` (or `http://[::1]:PORT/api/`): the base URL of an environment
  /// pointing here.
  public var baseURL: URL {
    URL(string: "http://\(host.urlHost):\(port)\(responder.options.basePath)")
      ?? URL(fileURLWithPath: "/")
  }

  /// Answers `method pattern` (from the root: `/redirect`, `/api/books/{id}`) with `handler`.
  public func handle(
    _ method: String, _ pattern: String, with handler: @escaping FixtureRoutes.Answer
  ) {
    responder.handle(method, pattern, with: handler)
  }

  /// Stops listening and ends open connections.
  public func stop() async {
    await server.stop(timeout: 0)
    task.cancel()
  }
}

/// Why a fixture server did not start.
public enum FixtureServerError: Error, CustomStringConvertible {
  case notLoopback(host: String)
  case cannotListen(host: String, port: UInt16, reason: String)

  public var description: String {
    switch self {
    case .notLoopback(let host):
      "The fixture server listens on loopback addresses only (127.0.0.1, ::1, localhost), not \(host)."
    case .cannotListen(let host, let port, let reason):
      "The fixture server could not listen on \(host) port \(port): \(reason)"
        + (port < 1024 && port != 0 ? " (ports below 1024 need privileges)." : ".")
    }
  }
}

/// FlyingFox's requests to the responder and back.
private struct Handler: HTTPHandler, Sendable {
  let responder: SampleApiResponder

  func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
    var headers: [String: String] = [:]
    for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
    let sample = SampleRequest(
      method: request.method.rawValue, path: request.path, headers: headers,
      body: try await request.bodyData)
    let response = await responder.respond(to: sample)
    var responseHeaders = HTTPHeaders()
    for (name, value) in response.headers { responseHeaders[HTTPHeader(name)] = value }
    return HTTPResponse(
      statusCode: HTTPStatusCode(response.status, phrase: Self.phrase(response.status)),
      headers: responseHeaders, body: response.body)
  }

  private static func phrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 301: "Moved Permanently"
    case 302: "Found"
    case 307: "Temporary Redirect"
    case 308: "Permanent Redirect"
    case 401: "Unauthorized"
    case 404: "Not Found"
    case 405: "Method Not Allowed"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    default: "Status"
    }
  }
}

/// A socket pool that turns off Nagle's algorithm on every socket it waits for.
///
/// FlyingFox writes a response's head and body separately; with Nagle on, the body waits for
/// the client's delayed ACK, about 40 ms per request on Linux (measured: 44 ms per GET). The
/// listening socket passes through here before its first accept, and Linux hands its
/// `TCP_NODELAY` on to every connection it accepts; connections are also set when they wait.
private struct NoDelayPool<Base: AsyncSocketPool>: AsyncSocketPool {
  let base: Base

  func prepare() async throws { try await base.prepare() }

  func run() async throws { try await base.run() }

  func suspendSocket(_ socket: Socket, untilReadyFor events: Socket.Events) async throws {
    var on: Int32 = 1
    // Fails harmlessly on sockets that are not TCP.
    _ = setsockopt(
      socket.file.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &on,
      socklen_t(MemoryLayout<Int32>.size))
    try await base.suspendSocket(socket, untilReadyFor: events)
  }
}
