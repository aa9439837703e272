import FlyingFox
import FlyingSocks
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The sample API over HTTP on a loopback port, for tests, benchmarks and `kernel serve`.
///
/// Tests can add their own routes (a redirect, a challenge, a slow body) with `handle`; they
/// take precedence over the sample API's.
public final class FixtureServer: Sendable {
  public let responder: SampleApiResponder
  public let port: UInt16
  private let server: HTTPServer
  private let task: Task<Void, any Error>
  private let routes: Routes

  /// Starts serving on `127.0.0.1`, on `port` or, with 0, on a free port the system picks.
  public static func start(
    options: SampleApiResponder.Options = .init(), host: String = "127.0.0.1", port: UInt16 = 0
  ) async throws -> FixtureServer {
    let responder = SampleApiResponder(options: options)
    let routes = Routes(responder: responder)
    let address = try sockaddr_in.inet(ip4: host, port: port)
    let pool = NoDelayPool(base: HTTPServer.defaultPool())
    let server = HTTPServer(
      address: address, timeout: 60, pool: pool, logger: .disabled, handler: routes)
    let task = Task { try await server.run() }
    // A deadline against a hang only: on a loaded machine listening can take seconds.
    try await server.waitUntilListening(timeout: 60)
    guard case .ip4(_, let bound) = await server.listeningAddress else {
      task.cancel()
      throw FixtureServerError.notListening(host: host, port: port)
    }
    return FixtureServer(
      responder: responder, port: bound, server: server, task: task, routes: routes)
  }

  private init(
    responder: SampleApiResponder, port: UInt16, server: HTTPServer, task: Task<Void, any Error>,
    routes: Routes
  ) {
    self.responder = responder
    self.port = port
    self.server = server
    self.task = task
    self.routes = routes
  }

  /// `http://127.0.0.1:PORT/api/`: the base URL of an environment pointing here.
  public var baseURL: URL {
    URL(string: "http://127.0.0.1:\(port)\(responder.options.basePath)")
      ?? URL(fileURLWithPath: "/")
  }

  /// Answers `method path` (path from the root, e.g. `/redirect`) with `handler` instead.
  public func handle(
    _ method: String, _ path: String,
    with handler: @escaping @Sendable (SampleRequest) async -> SampleResponse
  ) {
    routes.add(method: method, path: path, handler: handler)
  }

  /// Stops listening and ends open connections.
  public func stop() async {
    await server.stop(timeout: 0)
    task.cancel()
  }
}

/// Why a fixture server did not start.
public enum FixtureServerError: Error, CustomStringConvertible {
  case notListening(host: String, port: UInt16)

  public var description: String {
    switch self {
    case .notListening(let host, let port):
      "The fixture server could not listen on \(host):\(port)."
    }
  }
}

/// Test routes first, then the sample API.
private final class Routes: HTTPHandler, Sendable {
  let responder: SampleApiResponder
  private let extra = Mutex<[String: @Sendable (SampleRequest) async -> SampleResponse]>([:])

  init(responder: SampleApiResponder) { self.responder = responder }

  func add(
    method: String, path: String,
    handler: @escaping @Sendable (SampleRequest) async -> SampleResponse
  ) {
    extra.withLock { $0["\(method.uppercased()) \(path)"] = handler }
  }

  func handleRequest(_ request: HTTPRequest) async throws -> HTTPResponse {
    var headers: [String: String] = [:]
    for (name, value) in request.headers { headers[name.rawValue.lowercased()] = value }
    let sample = SampleRequest(
      method: request.method.rawValue, path: request.path, headers: headers,
      body: try await request.bodyData)
    let custom = extra.withLock { $0["\(sample.method) \(sample.path)"] }
    let response: SampleResponse
    if let custom {
      response = await custom(sample)
    } else {
      response = await responder.respond(to: sample)
    }
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
