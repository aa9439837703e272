import Domain
import FlyingSocks
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An API over HTTP on a loopback port, for tests, benchmarks and an app's `serve`: any app's
/// routes (`FixtureRoutes`: closures, or a folder of JSON files).
///
/// Tests can add routes (a redirect, a challenge, a slow body) with `handle`; they take
/// precedence over equal patterns. Latency, faults and required auth apply to every route.
///
/// HTTP/1.1 with keep-alive, on FlyingSocks' non-blocking sockets (FlyingFox's socket layer,
/// which needs nothing of FoundationNetworking); each connection is served in a task of its own.
public final class FixtureServer: Sendable {
  /// What answers its requests, and counts them (`totalRequests`, tokens issued).
  public let responder: SampleApiResponder
  /// The port it listens on (the system's choice when it was asked for 0).
  public let port: UInt16
  private let host: Loopback.Address
  private let listener: Socket
  private let task: Task<Void, Never>
  private let connections: Connections

  /// Starts serving on `host` (a loopback address: 127.0.0.1, another 127.x.y.z, ::1 or
  /// localhost), on `port` or, with 0, on a free port the system picks. A port that cannot be
  /// had (in use, privileged) fails at once with the system's reason.
  ///
  /// The server holds at most as many connections as its descriptors allow with a reserve to
  /// spare (`DescriptorBudget`); further ones wait in the listen queue until one closes. When
  /// accepting fails all the same (EMFILE), it waits `acceptBackoff` and goes on accepting.
  /// Either way `warn` is told why, once.
  public static func start(
    options: SampleApiResponder.Options = .init(), routes: FixtureRoutes,
    host: String = "127.0.0.1", port: UInt16 = 0, acceptBackoff: Duration = .milliseconds(50),
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) async throws -> FixtureServer {
    guard let loopback = Loopback.address(host) else {
      throw FixtureServerError.notLoopback(host: host)
    }
    return try await serve(
      options: options, routes: routes, host: host, port: port, acceptBackoff: acceptBackoff,
      warn: warn
    ) {
      // A port asked for by number may be taken again while the last run's connections close;
      // a free port the system picks never is one where a stopped server's connections linger,
      // so a client of that stopped server is refused, not answered by this one.
      try bindSocket(to: loopback, port: port, reuse: port != 0)
    }
  }

  /// Starts serving on a port held by `RefusingPort.hold()`, which it takes over: it listens on
  /// the held socket itself, so no other server or client connection can be given the port
  /// between the hold and the serving. A port already released or taken fails like one in use.
  public static func start(
    options: SampleApiResponder.Options = .init(), routes: FixtureRoutes,
    on held: RefusingPort.Held, acceptBackoff: Duration = .milliseconds(50),
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) async throws -> FixtureServer {
    try await serve(
      options: options, routes: routes, host: "127.0.0.1", port: held.port,
      acceptBackoff: acceptBackoff, warn: warn
    ) {
      guard let socket = held.take() else {
        throw SocketError.failed(
          type: "bind", errno: EADDRINUSE, message: "a server has taken this held port already")
      }
      return (socket, held.port)
    }
  }

  private static func serve(
    options: SampleApiResponder.Options, routes: FixtureRoutes, host: String, port: UInt16,
    acceptBackoff: Duration, warn: @escaping @Sendable (String) -> Void,
    bind: () throws -> (socket: Socket, port: UInt16)
  ) async throws -> FixtureServer {
    guard let loopback = Loopback.address(host) else {
      throw FixtureServerError.notLoopback(host: host)
    }
    let responder = SampleApiResponder(options: options, routes: routes)
    let pool = SocketPool.make(maxEvents: 64)
    let listener: Socket
    let bound: UInt16
    do {
      try await pool.prepare()
      (listener, bound) = try bind()
      try listener.listen()
    } catch {
      throw FixtureServerError.cannotListen(host: host, port: port, reason: reason(error))
    }
    // Linux hands the listening socket's TCP_NODELAY on to every connection it accepts.
    noDelay(listener)
    let connections = Connections()
    let capacity = try DescriptorBudget.connections()
    let accepting = try AsyncSocket(socket: listener, pool: pool)
    let task = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { try? await pool.run() }
        group.addTask {
          await withDiscardingTaskGroup { clients in
            var warned = false
            while !connections.isStopped && !Task.isCancelled {
              if !connections.hasRoom(below: capacity) {
                if !warned {
                  warn(
                    "The server holds \(capacity) connection(s), as many as its descriptors allow"
                      + " (ulimit -n); further ones wait until one closes.")
                  warned = true
                }
                guard await connections.waitForRoom(below: capacity) else { return }
              }
              do {
                let client = try await accepting.accept()
                noDelay(client.socket)
                guard connections.open(client) else {
                  try? client.close()
                  continue
                }
                clients.addTask {
                  await serve(client, responder: responder, connections: connections)
                }
              } catch {
                // A stop ends the loop; anything else (EMFILE, ENFILE, ENOMEM) passes: the
                // waiting connections stay queued and are taken when descriptors are free.
                if connections.isStopped || Task.isCancelled { return }
                if !warned {
                  warn(
                    "The server could not accept a connection (\(reason(error))); it goes on"
                      + " trying, and the waiting connections are taken as soon as it can.")
                  warned = true
                }
                try? await Task.sleep(for: acceptBackoff)
              }
            }
          }
        }
        await group.next()
        group.cancelAll()
      }
    }
    return FixtureServer(
      responder: responder, host: loopback, port: bound, listener: listener, task: task,
      connections: connections)
  }

  /// Answers requests on one connection until the client closes it or asks to.
  private static func serve(
    _ client: AsyncSocket, responder: SampleApiResponder, connections: Connections
  ) async {
    defer { connections.close(client) }
    var buffer: [UInt8] = []
    while !Task.isCancelled {
      do {
        while HTTPWire.headEnd(in: buffer) == nil {
          guard buffer.count <= HTTPWire.headLimit else {
            throw HTTPWire.Refusal(status: 431, message: "a request head over 64 KB")
          }
          buffer += try await client.read(atMost: 65536)
        }
        let end = HTTPWire.headEnd(in: buffer) ?? buffer.count
        var (parsed, length) = try HTTPWire.parseHead(buffer[..<end])
        buffer.removeFirst(end)
        while buffer.count < length { buffer += try await client.read(atMost: 65536) }
        parsed.request.body = Data(buffer[..<length])
        buffer.removeFirst(length)
        let response = await responder.respond(to: parsed.request)
        let head = parsed.request.method == "HEAD"
        try await client.write(HTTPWire.encode(response, keepAlive: parsed.keepAlive, head: head))
        if let body = response.generated, !head {
          for offset in stride(from: 0, to: body.length, by: GeneratedBody.chunkSize) {
            try await client.write(
              body.chunk(offset, min(GeneratedBody.chunkSize, body.length - offset)))
          }
        }
        if !parsed.keepAlive { return }
      } catch let refusal as HTTPWire.Refusal {
        let answer = SampleResponse.error(
          refusal.status, "the server cannot read \(refusal.message)")
        try? await client.write(HTTPWire.encode(answer, keepAlive: false, head: false))
        return
      } catch {
        return  // the client went away
      }
    }
  }

  /// Turns off Nagle's algorithm; fails harmlessly on sockets that are not TCP.
  private static func noDelay(_ socket: Socket) {
    var on: Int32 = 1
    _ = setsockopt(
      socket.file.rawValue, Int32(IPPROTO_TCP), TCP_NODELAY, &on,
      socklen_t(MemoryLayout<Int32>.size))
  }

  /// The system's words for why a socket could not listen ("Address already in use").
  private static func reason(_ error: any Error) -> String {
    if case SocketError.failed(_, _, let message) = error { return message }
    return "\(error)"
  }

  private init(
    responder: SampleApiResponder, host: Loopback.Address, port: UInt16, listener: Socket,
    task: Task<Void, Never>, connections: Connections
  ) {
    self.responder = responder
    self.host = host
    self.port = port
    self.listener = listener
    self.task = task
    self.connections = connections
  }

  /// `http://127.0.0.1:PORT/api/` (or `http://[::1]:PORT/api/`): the base URL of an environment
  /// pointing here.
  public var baseURL: URL {
    URL(string: "http://\(host.urlHost):\(port)\(responder.options.basePath)")
      ?? URL(fileURLWithPath: "/")
  }

  /// Connections accepted since the start: with keep-alive, fewer than requests answered.
  public var connectionsAccepted: Int { connections.accepted }

  /// Answers `method pattern` (from the root: `/redirect`, `/api/books/{id}`) with `handler`.
  public func handle(
    _ method: String, _ pattern: String, with handler: @escaping FixtureRoutes.Answer
  ) {
    responder.handle(method, pattern, with: handler)
  }

  /// Stops listening and ends open connections, then waits for every connection's task to end.
  /// Sockets are shut down before they are closed: a shutdown wakes whatever waits on them (a
  /// close alone would leave a waiting accept or read suspended forever).
  public func stop() async {
    _ = shutdown(listener.file.rawValue, Int32(SHUT_RDWR))
    connections.closeAll()
    task.cancel()
    await task.value
    try? listener.close()
  }
}

/// A TCP socket bound to `address` and `port` (0: one the system picks), not yet listening, and
/// the port it got. With `reuse`, it may bind beside the last server's connections that are
/// still closing (TIME_WAIT) and beside other sockets that asked for reuse and do not listen;
/// without, it holds the port alone.
func bindSocket(to address: Loopback.Address, port: UInt16, reuse: Bool) throws -> (
  socket: Socket, port: UInt16
) {
  let socket: Socket
  switch address {
  case .ip4(let ip):
    socket = try Socket(domain: AF_INET)
    try socket.setValue(reuse, for: .localAddressReuse)
    try socket.bind(to: try sockaddr_in.inet(ip4: ip, port: port))
  case .ip6(let ip):
    socket = try Socket(domain: AF_INET6)
    try socket.setValue(reuse, for: .localAddressReuse)
    try socket.bind(to: try sockaddr_in6.inet6(ip6: ip, port: port))
  }
  do {
    switch try socket.sockname() {
    case .ip4(_, let bound), .ip6(_, let bound): return (socket, bound)
    default: throw SocketError.unsupportedAddress
    }
  } catch {
    try? socket.close()
    throw error
  }
}

/// The open connections of a server, so stopping it can end them, and the accept loop waiting
/// for one to close when it holds as many as it may.
private final class Connections: Sendable {
  private let state = Mutex<
    (
      open: [Int32: AsyncSocket], accepted: Int, stopped: Bool,
      waiting: CheckedContinuation<Bool, Never>?
    )
  >(([:], 0, false, nil))

  func hasRoom(below capacity: Int) -> Bool { state.withLock { $0.open.count < capacity } }

  /// Returns true once fewer than `capacity` are open, false once the server stopped.
  func waitForRoom(below capacity: Int) async -> Bool {
    await withCheckedContinuation { continuation in
      let answer: Bool? = state.withLock { state in
        if state.stopped { return false }
        if state.open.count < capacity { return true }
        state.waiting = continuation
        return nil
      }
      if let answer { continuation.resume(returning: answer) }
    }
  }

  var accepted: Int { state.withLock { $0.accepted } }
  var isStopped: Bool { state.withLock { $0.stopped } }

  /// Tracks `client`; false once the server stopped.
  func open(_ client: AsyncSocket) -> Bool {
    state.withLock { state in
      guard !state.stopped else { return false }
      state.open[client.socket.file.rawValue] = client
      state.accepted += 1
      return true
    }
  }

  func close(_ client: AsyncSocket) {
    let (tracked, waiting) = state.withLock { state in
      let tracked = state.open.removeValue(forKey: client.socket.file.rawValue)
      defer { state.waiting = nil }
      return (tracked, state.waiting)
    }
    if tracked != nil { try? client.close() }
    waiting?.resume(returning: true)
  }

  /// Shuts every open connection down; each is closed as its task ends.
  func closeAll() {
    let (open, waiting) = state.withLock { state in
      state.stopped = true
      defer { state.waiting = nil }
      return (Array(state.open.values), state.waiting)
    }
    waiting?.resume(returning: false)
    for client in open { _ = shutdown(client.socket.file.rawValue, Int32(SHUT_RDWR)) }
  }
}

/// Why a fixture server did not start, or could not serve a folder of fixtures.
public enum FixtureServerError: Error, CustomStringConvertible {
  /// `host` is not a loopback address: a fixture server never listens elsewhere.
  case notLoopback(host: String)
  /// It could not listen on `host`:`port`, for `reason` (in use, not permitted).
  case cannotListen(host: String, port: UInt16, reason: String)
  /// The descriptor limit (`ulimit -n`) leaves no room for a connection beside the reserve.
  case tooFewDescriptors(limit: Int, needed: Int)
  /// The fixture folder at `path` cannot be read, for `reason`.
  case unusableFolder(path: String, reason: String)
  /// The fixture file at `path` cannot be served (not JSON, an unusable name), for `reason`.
  case badFile(path: String, reason: String)

  public var description: String {
    switch self {
    case .notLoopback(let host):
      "The fixture server listens on loopback addresses only (127.0.0.1, ::1, localhost), not \(host)."
    case .cannotListen(let host, let port, let reason):
      "The fixture server could not listen on \(host) port \(port): \(reason)"
        + (port < 1024 && port != 0 ? " (ports below 1024 need privileges)." : ".")
    case .tooFewDescriptors(let limit, let needed):
      "The fixture server cannot serve with \(limit) file descriptors (ulimit -n): it needs at"
        + " least \(needed); raise the limit with ulimit -n."
    case .unusableFolder(let path, let reason):
      "The fixture folder \(path) cannot be served: \(reason)."
    case .badFile(let path, let reason): "The fixture \(path) cannot be served: \(reason)."
    }
  }
}
