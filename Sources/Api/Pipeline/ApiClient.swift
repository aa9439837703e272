import Domain
import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The request pipeline every api service uses: route → URL in the context's current
/// environment → adapters → transport → validation → (retriers, and again) → decoding.
/// Transport failures become `ApiError`s naming the route.
///
/// Each try is built anew from the route and the current environment, then adapted, so a
/// retry carries the newest token. The retriers decide in order (see `RequestRetrier`); at most
/// `maxAttempts` tries are made in all, whatever they decide.
public final class ApiClient: Sendable {
  public let context: any ApiContext
  public let transport: any Transport
  public let adapter: CompositeAdapter
  public let retrier: CompositeRetrier
  public let maxAttempts: Int

  public init(
    context: any ApiContext, transport: any Transport,
    adapters: [any RequestAdapter] = [.defaultHeaders, .authToken],
    retriers: [any RequestRetrier] = [.authRefresh, .backoff], maxAttempts: Int = 8
  ) {
    self.context = context
    self.transport = transport
    self.adapter = CompositeAdapter(adapters)
    self.retrier = CompositeRetrier(retriers)
    self.maxAttempts = max(1, maxAttempts)
  }

  /// The validated (2xx) response of `route`.
  public func response(for route: Route) async throws -> ApiResponse {
    var attempt = Attempt(route: route, client: self)
    while true {
      try Task.checkCancellation()
      var request = URLRequest(url: route.url(in: context.environment))
      request.httpMethod = route.method
      Self.offerValidators(to: &request)
      request = try await adapter.adapt(request, for: attempt)
      let outcome: AttemptOutcome
      do {
        let response = try await transport.send(request)
        if (200..<300).contains(response.status) {
          Self.reportValidators(of: response)
          if route != .auth { Provenance.record(Provenance(origin: .network, age: 0)) }
          return response
        }
        if response.status == 304 && ConditionalRequest.offered != nil { throw NotModified() }
        outcome = .response(response)
      } catch let error as TransportError {
        outcome = .failure(error)
      }
      guard attempt.number < maxAttempts else { throw Self.apiError(outcome, route: route) }
      let (decision, retrier) = await retrier.decide(request, for: attempt, after: outcome)
      switch decision {
      case .retry: break
      case .retryAfter(let delay): try await Task.sleep(for: delay)
      case .doNotRetry: throw Self.apiError(outcome, route: route)
      case .fail(let error): throw error
      }
      attempt = attempt.next(decidedBy: retrier)
    }
  }

  /// The value of `route` decoded from its body by `mapping`.
  public func value<T: Decodable>(_ type: T.Type, for route: Route, mapping: JSONMapping = .body)
    async throws -> T
  {
    let response = try await response(for: route)
    return try mapping.decode(type, from: response.body, route: route)
  }

  /// Makes a GET conditional on the validators a cache layer offered for this task.
  private static func offerValidators(to request: inout URLRequest) {
    guard request.httpMethod == "GET", let offered = ConditionalRequest.offered else { return }
    if let etag = offered.etag { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
    if let lastModified = offered.lastModified {
      request.setValue(lastModified, forHTTPHeaderField: "If-Modified-Since")
    }
  }

  /// Tells a waiting cache layer the validators of a fresh response.
  private static func reportValidators(of response: ApiResponse) {
    guard let received = ConditionalRequest.received else { return }
    received.set(
      CacheValidators(
        etag: response.headers["etag"], lastModified: response.headers["last-modified"]))
  }

  static func apiError(_ outcome: AttemptOutcome, route: Route) -> ApiError {
    switch outcome {
    case .response(let response):
      .status(route: route, code: response.status, excerpt: ApiError.excerpt(response.body))
    case .failure(.cannotConnect(let host, let reason)):
      .unreachable(route: route, host: host, reason: reason)
    case .failure(.unknownHost(let host)):
      .unreachable(route: route, host: host, reason: "unknown host")
    case .failure(.timedOut(let host)): .timedOut(route: route, host: host)
    case .failure(.redirectRefused(_, let to, let reason)):
      .redirectRefused(route: route.description, location: to, reason: reason)
    }
  }
}
