import Foundation
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The real transport: `URLSession`, with a session delegate that closes the gaps
/// FoundationNetworking has on Linux.
///
/// - A redirect to another scheme, host or port drops `Authorization` and the configured token
///   headers (Linux keeps them).
/// - A redirect that would send a request's body on without it (Linux drops bodies, and 301-303
///   turn POST into GET) is not followed: the request fails with `redirectRefused`.
/// - A Basic or Digest challenge is cancelled, so the 401 comes back (Linux waits forever).
/// - Nothing is cached; cookies are neither stored nor sent.
///
/// Timeouts: `requestTimeout` bounds the wait for each piece of the response (in whole seconds,
/// rounded up: FoundationNetworking on Linux treats a fraction of a second as no time at all);
/// `resourceTimeout` bounds the whole exchange, enforced here to the millisecond, so a body that
/// drips forever still ends. That deadline is kept on `clock`, so a test can pass it by advancing
/// a test clock.
public final class URLSessionTransport: Transport {
  /// Timeouts and the headers a cross-origin redirect must not carry.
  public struct Configuration: Sendable {
    public var requestTimeout: Duration = .seconds(30)
    public var resourceTimeout: Duration = .seconds(60)
    /// Removed from a request redirected to another origin; `Authorization` always is.
    public var credentialHeaders: Set<String> = ["Authorization"]
    public var maximumRedirects = 10
    /// Connections open to one host at once: requests beyond it wait for one to be free.
    /// (URLSession's default is 6, which would cap any higher concurrency of the callers.)
    public var maximumConnectionsPerHost = 64

    public init() {}
  }

  private let session: URLSession
  private let delegate: SessionDelegate
  public let configuration: Configuration
  /// Keeps the whole-exchange deadline.
  public let clock: any Clock<Duration>

  public init(
    configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.configuration = configuration
    self.clock = clock
    let sessionConfiguration = URLSessionConfiguration.ephemeral
    sessionConfiguration.urlCache = nil
    sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
    sessionConfiguration.httpCookieStorage = nil
    sessionConfiguration.httpShouldSetCookies = false
    sessionConfiguration.timeoutIntervalForRequest = configuration.requestTimeout.wholeSeconds
    sessionConfiguration.timeoutIntervalForResource = configuration.resourceTimeout.wholeSeconds + 1
    sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
    delegate = SessionDelegate(
      credentialHeaders: Set(
        configuration.credentialHeaders.map { $0.lowercased() } + ["authorization"]),
      maximumRedirects: configuration.maximumRedirects)
    session = URLSession(
      configuration: sessionConfiguration, delegate: delegate, delegateQueue: nil)
  }

  deinit { session.finishTasksAndInvalidate() }

  #if !canImport(Darwin)
    /// The URL Linux's URLSession can send: it refuses every IPv6 address literal (`[::1]`,
    /// NSURLErrorBadURL: it checks that curl's host, `[::1]`, equals `URL.host`, `::1`). The IPv6
    /// loopback becomes `localhost`, which libcurl resolves itself to both loopback addresses (so
    /// a server on `::1` only is reached; but curl may try 127.0.0.1 first, and a different server
    /// listening there on the same port would answer). Any other IPv6 literal is one sentence
    /// instead of error -1000. The curl transport of issue 17 sends IPv6 literals as they are.
    static func reachableOnLinux(_ url: URL) throws -> URL {
      guard let host = url.host, host.contains(":") else { return url }
      guard host == "::1" || host == "0:0:0:0:0:0:0:1",
        var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
      else {
        throw TransportError.cannotConnect(
          host: host,
          reason:
            "URLSession on Linux cannot reach an IPv6 address literal; use a host name for it")
      }
      parts.host = "localhost"
      return parts.url ?? url
    }
  #endif

  public func send(_ request: URLRequest) async throws -> ApiResponse {
    try Task.checkCancellation()
    var request = request
    request.timeoutInterval = configuration.requestTimeout.wholeSeconds
    let host = request.url?.host ?? "the server"
    #if !canImport(Darwin)
      request.url = try request.url.map(Self.reachableOnLinux)
    #endif
    let handle = TaskHandle()
    let deadline = configuration.resourceTimeout
    let watchdog = Task { [clock] in
      try await clock.sleep(for: deadline)
      handle.timeOut()
    }
    defer { watchdog.cancel() }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<ApiResponse, any Error>) in
        let task = session.dataTask(with: request) { [delegate] data, response, error in
          let notes = delegate.finish(handle.identifier)
          continuation.resume(
            with: Self.outcome(
              data, response, error, notes: notes, ending: handle.ending, host: host))
        }
        handle.start(task)
      }
    } onCancel: {
      handle.cancel()
    }
  }

  /// What a finished task means: a response, a 401 from a cancelled challenge, or an error.
  private static func outcome(
    _ data: Data?, _ response: URLResponse?, _ error: (any Error)?, notes: SessionDelegate.Notes,
    ending: TaskHandle.Ending?, host: String
  ) -> Result<ApiResponse, any Error> {
    if let refusal = notes.refusedRedirect { return .failure(refusal) }
    if let challenge = notes.challengeResponse {
      return .success(ApiResponse(status: challenge.statusCode, headers: headers(of: challenge)))
    }
    if let error {
      switch ending {
      case .cancelled: return .failure(CancellationError())
      case .timedOut: return .failure(TransportError.timedOut(host: host))
      case nil: return .failure(transportError(error, host: host))
      }
    }
    guard let http = response as? HTTPURLResponse else {
      return .failure(TransportError.cannotConnect(host: host, reason: "the answer was not HTTP"))
    }
    return .success(
      ApiResponse(status: http.statusCode, headers: headers(of: http), body: data ?? Data()))
  }

  private static func headers(of response: HTTPURLResponse) -> [String: String] {
    var headers: [String: String] = [:]
    for (name, value) in response.allHeaderFields {
      headers[String(describing: name).lowercased()] = String(describing: value)
    }
    return headers
  }

  private static func transportError(_ error: any Error, host: String) -> any Error {
    guard let urlError = error as? URLError else {
      return TransportError.cannotConnect(host: host, reason: error.localizedDescription)
    }
    switch urlError.code {
    case .timedOut:
      return TransportError.timedOut(host: host)
    case .cancelled:
      return CancellationError()
    case .cannotConnectToHost:
      return TransportError.cannotConnect(host: host, reason: "connection refused")
    case .cannotFindHost, .dnsLookupFailed:
      return TransportError.cannotConnect(host: host, reason: "unknown host")
    case .networkConnectionLost:
      return TransportError.cannotConnect(host: host, reason: "connection lost")
    case .notConnectedToInternet:
      return TransportError.cannotConnect(host: host, reason: "no network")
    case .httpTooManyRedirects:
      return TransportError.redirectRefused(
        from: host, to: "another redirect", reason: "too many redirects")
    default:
      return TransportError.cannotConnect(host: host, reason: urlError.localizedDescription)
    }
  }
}

/// The data task of one `send`, so cancelling the Swift task (or the deadline passing) cancels
/// it even when that happens before the data task exists.
private final class TaskHandle: Sendable {
  /// Why the data task was ended early.
  enum Ending: Sendable {
    case cancelled, timedOut
  }

  private let state = Mutex<(task: URLSessionDataTask?, ending: Ending?)>((nil, nil))

  var ending: Ending? { state.withLock { $0.ending } }
  var identifier: Int { state.withLock { $0.task?.taskIdentifier ?? -1 } }

  func start(_ task: URLSessionDataTask) {
    let ended = state.withLock { state -> Bool in
      state.task = task
      return state.ending != nil
    }
    task.resume()
    if ended { task.cancel() }
  }

  func cancel() { end(.cancelled) }

  func timeOut() { end(.timedOut) }

  private func end(_ reason: Ending) {
    let task = state.withLock { state -> URLSessionDataTask? in
      if state.ending == nil { state.ending = reason }
      return state.task
    }
    task?.cancel()
  }
}

extension Duration {
  /// This duration in whole seconds, rounded up, at least one.
  var wholeSeconds: TimeInterval {
    let parts = components
    return TimeInterval(max(1, parts.seconds + (parts.attoseconds > 0 ? 1 : 0)))
  }
}
