import Api
import Domain
import Foundation
import Injection

/// What a run adds to the configuration: where data lives, what the command line chose, and
/// where logs and warnings go.
public struct Runtime: Sendable {
  public var dataDirectory: URL
  /// `--environment`, overriding the saved and the configured one.
  public var environment: String?
  /// `--base-url`, overriding the chosen environment's base URL.
  public var baseURL: String?
  public var log: @Sendable (String) -> Void
  public var warn: @Sendable (String) -> Void

  public init(
    dataDirectory: URL, environment: String? = nil, baseURL: String? = nil,
    log: @escaping @Sendable (String) -> Void = { _ in },
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.dataDirectory = dataDirectory
    self.environment = environment
    self.baseURL = baseURL
    self.log = log
    self.warn = warn
  }
}

/// Kernel's own composition: `KernelApp.kernel` (Kernel's parts and the movie service, from
/// the catalog like an app's). An app calls the same methods on its own `KernelApp`.
public enum KernelComposition {
  /// A validated, bootstrapped container for `profile` (the config's default when nil).
  public static func bootstrap(config: KernelConfig, profile: String? = nil, runtime: Runtime)
    throws -> Container
  {
    try KernelApp.kernel.bootstrap(config: config, profile: profile, runtime: runtime)
  }

  /// The api side alone, whatever the profile's stack: environments, context, transport, auth.
  /// `kernel auth` and `kernel env` use it, so they work under any profile.
  public static func bootstrapApi(config: KernelConfig, runtime: Runtime) throws -> Container {
    try KernelApp.kernel.bootstrapApi(config: config, runtime: runtime)
  }

  /// The registrations for `profile`, not yet validated: tests override parts of it in a child.
  public static func compose(config: KernelConfig, profile: String? = nil, runtime: Runtime) throws
    -> Container
  {
    try KernelApp.kernel.compose(config: config, profile: profile, runtime: runtime)
  }

  /// The environments the config defines, as the api sees them.
  public static func environments(_ config: KernelConfig) throws -> [ApiEnvironment] {
    try KernelApp.kernel.environments(config)
  }
}
