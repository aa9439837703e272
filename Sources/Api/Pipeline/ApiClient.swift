import Domain
import Foundation
import HTTPTypes

/// The request pipeline every api service uses: route → URL in the context's current
/// environment → adapters → authentication → transport → validation → (authentication's
/// refresh, retriers, and again) → decoding.
/// Transport failures become `ApiError`s naming the route. Redirects are followed here, by
/// `redirects`, whatever the transport.
///
/// Each try is built anew from the route and the current environment, then adapted and
/// authenticated, so a retry carries the newest credential. The retriers decide in order (see
/// `RequestRetrier`); at most
/// `maxAttempts` tries are made in all, whatever they decide. A delay a retrier asks for is
/// waited on `clock`, so a test advances a test clock instead of sleeping.
public final class ApiClient: Sendable {
  /// The environment and credential every request uses.
  public let context: any ApiContext
  /// What sends each try.
  public let transport: any Transport
  /// The adapters, run in order on every try.
  package let adapter: CompositeAdapter
  /// Puts the environment's credential on its requests and refreshes it (see
  /// `AuthenticationInterceptor`);
  /// nil: requests go as adapted, and a 401 is the api's answer.
  public let authentication: AuthenticationInterceptor?
  /// The retriers, asked in order after a failed try.
  let retrier: CompositeRetrier
  /// The most tries of one request, retries included.
  public let maxAttempts: Int
  /// Waits out retry delays and times each try.
  public let clock: any Clock<Duration>
  /// Told of every try as it ends (`RequestEvent`: the request with credentials redacted in
  /// its trace line, the outcome, the transport's metrics, what happens next), and of notes
  /// about a call: the `-v` trace is one (`LogMonitor`).
  public let monitors: [any RequestMonitor]
  /// The most a whole call may take, every try, retry delay and wait included; past it the
  /// call is cancelled and fails with `ApiError.deadlineExceeded` (unreachable). Nil: no bound
  /// beyond each try's own timeouts.
  public let deadline: Duration?
  /// Keeps the deadline. Not `clock`: a test that makes retry waits immediate must not make
  /// every deadline pass at once.
  public let deadlineClock: any Clock<Duration>
  /// Which redirects are followed, and what a request to another origin leaves behind.
  public let redirects: Redirects
  /// The header names no trace shows and no request redirected to another origin carries,
  /// lower-cased, made once: the standard credentials, `redirects.secretHeaders`, every
  /// adapter's and the authentication's. The current environment's token header is added where they
  /// are used
  /// (`secrets(for:)`): an environment may change under a client.
  public let secretHeaders: Set<String>
  /// Origins found unreachable in this client's lifetime: requests to them fail at once for a
  /// while instead of each retrying on its own.
  let unreachable: UnreachableOrigins
  /// The validators a cached copy offers to this client's GET requests: set only on the copy
  /// `offering(_:)` makes for one call.
  private let offered: CacheValidators?

  /// A client of these parts; every one but the context and the transport has a default.
  public init(
    context: any ApiContext, transport: any Transport,
    adapters: [any RequestAdapter] = [.defaultHeaders],
    authentication: AuthenticationInterceptor? = nil,
    retriers: [any RequestRetrier] = [.backoff], maxAttempts: Int = 8,
    clock: any Clock<Duration> = ContinuousClock(), deadline: Duration? = nil,
    deadlineClock: any Clock<Duration> = ContinuousClock(), redirects: Redirects = Redirects(),
    unreachableFor: Duration = .seconds(30), monitors: [any RequestMonitor] = []
  ) {
    self.context = context
    self.transport = transport
    self.adapter = CompositeAdapter(adapters)
    self.authentication = authentication
    self.retrier = CompositeRetrier(retriers)
    self.maxAttempts = max(1, maxAttempts)
    self.clock = clock
    self.deadline = deadline
    self.deadlineClock = deadlineClock
    self.redirects = redirects
    self.secretHeaders = Redirects.credentials.union(redirects.secretHeaders)
      .union(adapter.secretHeaders).union(authentication?.secretHeaders ?? [])
    self.unreachable = UnreachableOrigins(period: unreachableFor, clock: clock)
    self.monitors = monitors
    self.offered = nil
  }

  private init(
    _ other: ApiClient, authentication: AuthenticationInterceptor?, offered: CacheValidators?
  ) {
    context = other.context
    transport = other.transport
    adapter = other.adapter
    self.authentication = authentication
    retrier = other.retrier
    maxAttempts = other.maxAttempts
    clock = other.clock
    deadline = other.deadline
    deadlineClock = other.deadlineClock
    redirects = other.redirects
    secretHeaders = other.secretHeaders
    unreachable = other.unreachable
    monitors = other.monitors
    self.offered = offered
  }

  /// This client as an authenticator sends its own requests (token, refresh) with: no
  /// authentication, no cached copy's validators; the same transport, adapters, retriers,
  /// redirect rule and deadline.
  var forAuthentication: ApiClient {
    ApiClient(self, authentication: nil, offered: nil)
  }

  /// This client for one call a cache layer makes conditional: its requests carry
  /// `validators` (`If-None-Match`, `If-Modified-Since`) and a 304 to them throws
  /// `NotModified`; the validators of a 2xx answer come back in its `Response`. Requests that
  /// fetch a credential never carry them, and no other client sees them.
  public func offering(_ validators: CacheValidators?) -> ApiClient {
    ApiClient(
      self, authentication: authentication,
      offered: validators.flatMap { $0.isEmpty ? nil : $0 })
  }

  /// The validated response of `route` (a status it accepts, 2xx by default), within the deadline.
  public func response(for route: Route) async throws -> ApiResponse {
    guard let deadline else { return try await tries(for: route) }
    return try await withThrowingTaskGroup(of: ApiResponse?.self) { group in
      group.addTask { try await self.tries(for: route) }
      group.addTask { [deadlineClock] in
        try await deadlineClock.sleep(for: deadline)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next() else { throw CancellationError() }
      guard let response = first else {
        note("\(route.method) \(route.path): the call's deadline of \(deadline) passed")
        throw ApiError.deadlineExceeded(
          route: route, seconds: Int(deadline.components.seconds))
      }
      return response
    }
  }

  /// How a try receives a 2xx's body: whole in memory, written to a download's partial file
  /// (resuming from what it holds), or streamed as it arrives.
  enum Receiving: Sendable {
    case memory
    case file(PartialDownload)
    case stream
  }

  /// Tries `route` until it succeeds or the retriers give up.
  func tries(for route: Route, receiving: Receiving = .memory) async throws -> ApiResponse {
    if let body = route.body, !body.isEmpty, route.method == .get || route.method == .head {
      // libcurl would turn a GET with a body into a POST; no server expects either.
      throw ApiError.invalidRoute(
        route: route,
        reason: "a \(route.method) carries no body; send it as a POST, or the data as its query")
    }
    var attempt = Attempt(route: route, client: self)
    while true {
      try Task.checkCancellation()
      let environment = context.environment
      var request = route.request(in: environment)
      if let origin = request.origin, let known = unreachable.failure(of: origin) {
        note(
          "\(route.method) \(route.path): \(origin) was found unreachable moments ago; not tried")
        throw Self.apiError(.failure(known), route: route)
      }
      let offered = route.isAuthentication ? nil : offered
      if let offered { Self.offer(offered, to: &request) }
      var file: BodyFile?
      if case .file(let download) = receiving { file = download.file(for: &request) }
      request = try await adapter.adapt(request, for: attempt)
      if let authentication {
        request = try await authentication.authenticate(request, for: attempt)
      }
      let outcome: AttemptOutcome
      var started = Stopwatch(clock)
      var hops = 0
      do {
        let response: ApiResponse
        (request, response, started, hops) = try await following(
          request, route: route, attempt: attempt.number, saving: file,
          streaming: { if case .stream = receiving { true } else { false } }())
        if route.acceptableStatus.contains(response.status) {
          // An empty answer (a 204) has no type to check.
          guard
            response.body.isEmpty || route.accepts(contentType: response.headerFields[.contentType])
          else {
            ended(request, route, attempt, hops, .response(response), since: started, "; refused")
            throw ApiError.unacceptableContentType(
              route: route, contentType: response.headerFields[.contentType] ?? "",
              accepted: route.acceptableContentTypes ?? [])
          }
          ended(request, route, attempt, hops, .response(response), since: started, "")
          bodyEnded(
            response, request, route, attempt: attempt.number, redirect: hops, since: started)
          return response
        }
        if response.status == 304 && offered != nil {
          ended(
            request, route, attempt, hops, .response(response), since: started,
            "; the cached copy stands")
          throw NotModified()
        }
        // Not the answer: a body streaming behind it is not read.
        response.stream?.cancel()
        outcome = .response(response)
      } catch let error as TransportError {
        outcome = .failure(error)
      } catch let error as CancellationError {
        // A try cut short is a try too: its monitors hear of it, as of any other.
        report(
          request, route, attempt: attempt.number, redirect: hops, status: nil,
          result: "cancelled", metrics: nil, since: started, then: "; not retried")
        throw error
      }
      guard attempt.number < maxAttempts else {
        ended(request, route, attempt, hops, outcome, since: started, "; no tries left")
        throw gaveUp(request, outcome, route: route)
      }
      let (decision, retrier) = await decide(request, for: attempt, after: outcome)
      if !monitors.isEmpty {
        let next =
          switch decision {
          case .retry: "; retried now (\(retrier))"
          case .retryAfter(let delay): "; retried in \(delay.wholeMilliseconds) ms (\(retrier))"
          case .doNotRetry: "; not retried"
          case .fail: "; failed by \(retrier)"
          }
        ended(request, route, attempt, hops, outcome, since: started, next)
      }
      switch decision {
      case .retry: break
      case .retryAfter(let delay): try await clock.sleep(for: delay)
      case .doNotRetry: throw gaveUp(request, outcome, route: route)
      case .fail(let error): throw error
      }
      attempt = attempt.next(decidedBy: retrier)
    }
  }

  /// The authentication's decision about a refused credential, else the retriers'.
  private func decide(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome)
    async -> (decision: RetryDecision, by: String)
  {
    if let authentication, case .response(let response) = outcome,
      let decision = await authentication.recover(request, from: response, for: attempt)
    {
      return (decision, AuthenticationInterceptor.retrierName)
    }
    if outcome.status == 401 { return (.doNotRetry, "") }
    return await retrier.decide(request, for: attempt, after: outcome)
  }

  /// The error a request fails with once no more tries are made; a transport failure that says
  /// the origin cannot be reached is remembered (see `unreachable`).
  private func gaveUp(_ request: HTTPRequest, _ outcome: AttemptOutcome, route: Route) -> ApiError {
    if case .failure(let error) = outcome, let origin = request.origin {
      unreachable.record(error, for: origin)
    }
    return Self.apiError(outcome, route: route)
  }

  /// `secretHeaders` and the token header of `environment`: the one list the trace and the
  /// redirect rule both use.
  func secrets(for environment: ApiEnvironment) -> Set<String> {
    secretHeaders.union([environment.tokenHeader.lowercased()])
  }

  /// Sends `request`, and the request each redirect leads to, by `redirects`' rule: the last
  /// request sent, its response, when it started, and how many redirects led to it.
  private func following(
    _ request: HTTPRequest, route: Route, attempt: Int, saving file: BodyFile?, streaming: Bool
  ) async throws -> (HTTPRequest, ApiResponse, Stopwatch, Int) {
    var current = request
    var hops = 0
    while true {
      let started = Stopwatch(clock)
      let response =
        if let file {
          try await transport.send(current, body: route.body, saving: file)
        } else if streaming {
          try await transport.stream(current, body: route.body)
        } else {
          try await transport.send(current, body: route.body)
        }
      guard
        let next = try redirects.next(
          after: response, to: current, hasBody: !(route.body?.isEmpty ?? true), hops: hops,
          environment: context.environment, secret: secrets(for: context.environment))
      else { return (current, response, started, hops) }
      if !monitors.isEmpty {
        report(
          current, route, attempt: attempt, redirect: hops, .response(response), since: started,
          then: "; redirected to \(requestTrace.url(next.target ?? "?"))")
      }
      current = next
      hops += 1
    }
  }

  /// Logs in to the current environment with its authentication (`auth login`), and keeps the
  /// credential for its origin. An `AuthenticationError` it throws is one sentence naming the
  /// environment ("Could not log in to local: …").
  @discardableResult
  public func login(_ login: Login = Login()) async throws -> StoredCredential {
    guard let authentication else {
      throw AuthenticationError.loginRequired(
        "environment \(context.environment.name) has no authenticator, so there is nothing to"
          + " log in to")
    }
    return try await authentication.login(login, through: self)
  }

  /// The value of `request`: its route sent, validated, and its body decoded.
  public func send<Value: Sendable>(_ request: ApiRequest<Value>) async throws -> Value {
    try await response(request).value
  }

  /// The answer to `request` as a value: its body decoded, with the status, header fields and
  /// validators it came with.
  public func response<Value: Sendable>(_ request: ApiRequest<Value>) async throws -> Response<
    Value
  > {
    let response: ApiResponse
    do {
      response = try await self.response(for: request.route)
    } catch ApiError.status(var failure) {
      if let read = request.readFailure?(failure.body) {
        failure.message = read.message ?? failure.message
        failure.decodedBody = read.decoded
      }
      throw ApiError.status(failure)
    }
    return Response(
      value: try request.decode(response.body, request.route), status: response.status,
      headerFields: response.headerFields, body: response.body)
  }

  /// The value of `route` decoded from its body by `mapping`.
  public func value<T: Decodable & Sendable>(
    _ type: T.Type, for route: Route, mapping: JSONMapping = .body
  )
    async throws -> T
  {
    try await send(ApiRequest<T>(route, mapping: mapping))
  }

  /// Makes a GET conditional on the validators of a cached copy.
  private static func offer(_ offered: CacheValidators, to request: inout HTTPRequest) {
    guard request.method == .get else { return }
    if let etag = offered.etag { request.headerFields[.ifNoneMatch] = etag }
    if let lastModified = offered.lastModified {
      request.headerFields[.ifModifiedSince] = lastModified
    }
  }

  /// What this client's traces redact: its secret headers with the current environment's token
  /// header, and the authenticator's query items.
  public var requestTrace: RequestTrace {
    RequestTrace(
      secretHeaders: secrets(for: context.environment),
      secretQueryItems: authentication?.secretQueryItems ?? [])
  }

  static func apiError(_ outcome: AttemptOutcome, route: Route) -> ApiError {
    switch outcome {
    case .response(let response) where response.status == 401:
      // A refusal no authenticator took up: the api's answer, with the scheme it asks for.
      .authenticationFailed(
        route: route,
        reason: "the api answered HTTP 401"
          + (response.headerFields[.wwwAuthenticate].flatMap { $0.split(separator: " ").first }
            .map { ", asking for \($0)" } ?? ""))
    case .response(let response):
      .status(
        HTTPFailure(
          route: route, status: response.status, headerFields: response.headerFields,
          body: response.body))
    case .failure(.cannotConnect(let host, let reason)):
      .unreachable(route: route, host: host, reason: reason)
    case .failure(.unknownHost(let host)):
      .unreachable(route: route, host: host, reason: "unknown host")
    case .failure(.timedOut(let host)): .timedOut(route: route, host: host)
    case .failure(.redirectRefused(_, let to, let reason)):
      .redirectRefused(route: route.description, location: to, reason: reason)
    case .failure(.tooLarge(let host, let limit)): .tooLarge(route: route, host: host, limit: limit)
    case .failure(.headerTooLarge(let host)): .headerTooLarge(route: route, host: host)
    case .failure(.unavailable(let reason)): .transportUnavailable(route: route, reason: reason)
    case .failure(.bodyUnreadable(let reason)): .invalidRoute(route: route, reason: reason)
    case .failure(.cannotSave(let file, let reason)):
      .download(route: route, file: file, reason: reason)
    case .failure(.undecodable(let host, let reason)):
      .decoding(
        route: route, field: "",
        reason: "\(host) sent a body its Content-Encoding does not describe (\(reason))")
    }
  }
}
