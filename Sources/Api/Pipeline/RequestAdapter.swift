import Domain
import Foundation
import HTTPTypes

/// Changes a request before every try, retries included: headers, the token. An adapter that
/// throws fails the request with its error, and the adapters after it do not run.
public protocol RequestAdapter: Sendable {
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest
  /// Headers this adapter puts credentials in (`X-Api-Key`): redacted in every trace and
  /// removed from a request redirected to another origin. None unless declared.
  var secretHeaders: Set<String> { get }
}

extension RequestAdapter {
  public var secretHeaders: Set<String> { [] }
}

/// Several adapters run as one, in order.
public struct CompositeAdapter: RequestAdapter {
  public let adapters: [any RequestAdapter]

  public init(_ adapters: [any RequestAdapter]) { self.adapters = adapters }

  /// Every adapter's secret headers, lower-cased.
  public var secretHeaders: Set<String> {
    Set(adapters.flatMap { $0.secretHeaders.map { $0.lowercased() } })
  }

  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    for adapter in adapters { adapted = try await adapter.adapt(adapted, for: attempt) }
    return adapted
  }
}

/// `Accept: application/json` and a `User-Agent`: Kernel's (`Kernel/<version> (<platform>)`)
/// unless the app names its own.
public struct DefaultHeadersAdapter: RequestAdapter {
  public let userAgent: String

  public static let platform: String = {
    #if os(Linux)
      let platform = "Linux"
    #elseif os(macOS)
      let platform = "macOS"
    #elseif os(iOS)
      let platform = "iOS"
    #else
      let platform = "Swift"
    #endif
    return platform
  }()

  /// `Kernel/<version> (<platform>)`.
  public static let userAgent = "Kernel/\(KernelVersion.current) (\(platform))"

  public init(userAgent: String = Self.userAgent) { self.userAgent = userAgent }

  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    if adapted.headerFields[.accept] == nil { adapted.headerFields[.accept] = "application/json" }
    adapted.headerFields[.userAgent] = userAgent
    return adapted
  }
}

/// Puts the context's token on requests to the current environment's own origin, in the
/// environment's header and scheme (`Authorization: Bearer …`, or a bare `AUTH_TOKEN: …`).
/// A header the route set itself is its own: it is never removed or replaced. A request to any
/// other origin never gets the context's token.
public struct AuthTokenAdapter: RequestAdapter {
  public init() {}

  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    let environment = attempt.context.environment
    // Every try is built anew from its route, so a header here is the route's (or an earlier
    // adapter's) and stays as it is.
    guard request.value(of: environment.tokenHeader) == nil, environment.isOrigin(of: request),
      let token = attempt.context.token
    else { return request }
    var adapted = request
    adapted.set(environment.tokenHeader, Self.headerValue(token, in: environment))
    return adapted
  }

  /// `Bearer <token>`, or the bare token when the environment has no scheme.
  public static func headerValue(_ token: AuthToken, in environment: ApiEnvironment) -> String {
    environment.tokenScheme.map { "\($0) \(token.secret)" } ?? token.secret
  }

  /// The token a request carries for `environment`, if any.
  static func token(in request: HTTPRequest, for environment: ApiEnvironment) -> AuthToken? {
    guard var value = request.value(of: environment.tokenHeader) else { return nil }
    if let scheme = environment.tokenScheme, value.hasPrefix(scheme + " ") {
      value.removeFirst(scheme.count + 1)
    }
    return AuthToken(value)
  }
}

extension RequestAdapter where Self == DefaultHeadersAdapter {
  /// `Accept` and `User-Agent`.
  public static var defaultHeaders: Self { DefaultHeadersAdapter() }
}

extension RequestAdapter where Self == AuthTokenAdapter {
  /// The context's token, on requests to the environment's own origin only.
  public static var authToken: Self { AuthTokenAdapter() }
}

/// The package's version, as the `User-Agent` names it.
public enum KernelVersion {
  public static let current = "0.1.0"
}
