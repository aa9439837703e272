import Domain
import Foundation
import HTTPTypes

/// Changes a request before every try, retries included: headers, the token. An adapter that
/// throws fails the request with its error, and the adapters after it do not run.
public protocol RequestAdapter: Sendable {
  /// `request` as this adapter changes it for `attempt`; a thrown error stops the request before it
  /// is sent.
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest
  /// Headers this adapter puts credentials in (`X-Api-Key`): redacted in every trace and
  /// removed from a request redirected to another origin. None unless declared.
  var secretHeaders: Set<String> { get }
}

extension RequestAdapter {
  public var secretHeaders: Set<String> { [] }
}

/// Several adapters run as one, in order.
package struct CompositeAdapter: RequestAdapter {
  /// The adapters, in order.
  public let adapters: [any RequestAdapter]

  /// `adapters` as one, in order.
  public init(_ adapters: [any RequestAdapter]) { self.adapters = adapters }

  /// Every adapter's secret headers, lower-cased.
  public var secretHeaders: Set<String> {
    Set(adapters.flatMap { $0.secretHeaders.map { $0.lowercased() } })
  }

  /// `request` through every adapter in turn.
  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    for adapter in adapters { adapted = try await adapter.adapt(adapted, for: attempt) }
    return adapted
  }
}

/// `Accept: application/json` and a `User-Agent`: Kernel's (`Kernel/<version> (<platform>)`)
/// unless the app names its own.
public struct DefaultHeadersAdapter: RequestAdapter {
  /// The `User-Agent` sent.
  public let userAgent: String

  /// `Linux`, `macOS`, `iOS` or `Swift`: the platform as the `User-Agent` names it.
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

  /// Sends `userAgent`.
  public init(userAgent: String = Self.userAgent) { self.userAgent = userAgent }

  /// `request` with `Accept: application/json` unless it has one, and the `User-Agent`.
  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    if adapted.headerFields[.accept] == nil { adapted.headerFields[.accept] = "application/json" }
    adapted.headerFields[.userAgent] = userAgent
    return adapted
  }
}

extension RequestAdapter where Self == DefaultHeadersAdapter {
  /// `Accept` and `User-Agent`.
  public static var defaultHeaders: Self { DefaultHeadersAdapter() }
}

/// The package's version, as the `User-Agent` names it.
package enum KernelVersion {
  /// This package's version.
  public static let current = "0.1.0"
}

/// The environment's API key (`environments.<name>.apiKey`, a secret) in a header of every
/// request, beside whatever the environment authenticates with: a library card on top of a
/// login. The header is secret: redacted in every trace and never sent after a redirect to
/// another origin. Config: `adapters: [defaultHeaders, "apiKey(header: X-Library-Card)"]`. An
/// api whose key is its only authentication names the `apiKey` authenticator instead.
package struct ApiKeyAdapter: RequestAdapter {
  /// The header the key goes in.
  public let header: String

  /// The key in `header` (`X-Api-Key` unless the config names another).
  public init(header: String = "X-Api-Key") { self.header = header }

  public var secretHeaders: Set<String> { [header] }

  /// The request with the environment's key in `header`; without a key configured, a
  /// `loginRequired` error that names the setting to set.
  public func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    let environment = attempt.context.environment
    guard let key = environment.values["apiKey"], !key.isEmpty else {
      throw AuthenticationError.loginRequired(
        "no API key is configured for the \(header) header; set"
          + " environments.\(environment.name).apiKey")
    }
    var adapted = request
    adapted.set(header, key)
    return adapted
  }
}
