import Api
import Foundation

/// The resolved configuration Kernel builds its object graph from: what `Config/kernel.yaml`
/// holds once read, with the profile's section applied over the top level.
///
/// Keys (file key — type — default):
/// Every key can also come from a `KERNEL_*` variable (its path in capitals, `_` between words
/// and levels: `KERNEL_RETRY_MAX_RETRIES`) and from the profile's section (`profiles.<name>.<key>`);
/// `settings` says where each value came from.
///
/// - `profile` — string — `layered`: the profile used when none is named.
/// - `dataDir` — string — empty: the data dir; empty means `$XDG_DATA_HOME/kernel`, else
///   `~/.local/share/kernel`. `baseURL` — string — none: replaces the environment's base URL.
/// - `environment` — string — `sample`: the api environment used when none is chosen.
/// - `environments.<name>.baseURL` — URL — required; `.tokenHeader` — string — `Authorization`;
///   `.tokenScheme` — string or empty — `Bearer`; `.insecure` — bool — false.
/// - `context` — `memory` | `persistent` — `persistent`: where the environment and tokens live.
/// - `adapters` — list — `[defaultHeaders, authToken]`; `retriers` — list — `[authRefresh, backoff]`.
/// - `retry.maxRetries` — int — 2; `retry.baseDelayMs` — int — 200; `retry.retryAfterCapSeconds` — int — 30.
/// - `timeouts.requestSeconds` — int — 30; `timeouts.resourceSeconds` — int — 60.
/// - `profiles.<name>.movies` — list — the stack for `MovieService`, outermost layer first, ending
///   in a source: `api` or `store`. Layers: `logging`, `dedupe`, `memory`, `cache(<policy>)`.
public struct KernelConfig: Sendable, Equatable {
  public var file: String
  public var profile: String
  public var environment: String
  public var environments: [String: EnvironmentConfig]
  public var context: ContextKind
  public var adapters: [String]
  public var retriers: [String]
  public var retry: RetryConfig
  public var timeouts: TimeoutConfig
  public var profiles: [String: ProfileConfig]
  public var dataDir: String = ""
  public var baseURL: String?
  /// Each resolved value with its source, in the order `config show` prints them.
  public var settings: [Setting] = []

  /// One resolved value and where it came from.
  public struct Setting: Sendable, Equatable {
    public var key: String
    /// The value as shown to people: secrets (a password in a URL) are redacted.
    public var value: String
    public var source: ConfigDocument.Source
  }

  /// An environment as the file describes it.
  public struct EnvironmentConfig: Sendable, Equatable {
    public var baseURL: String
    public var tokenHeader = "Authorization"
    public var tokenScheme: String? = "Bearer"
    public var insecure = false

    public init(
      baseURL: String, tokenHeader: String = "Authorization", tokenScheme: String? = "Bearer",
      insecure: Bool = false
    ) {
      self.baseURL = baseURL
      self.tokenHeader = tokenHeader
      self.tokenScheme = tokenScheme
      self.insecure = insecure
    }
  }

  public enum ContextKind: String, Sendable, Equatable, CaseIterable {
    case memory, persistent
  }

  public struct RetryConfig: Sendable, Equatable {
    public var maxRetries = 2
    public var baseDelayMs = 200
    public var retryAfterCapSeconds = 30
    public init() {}
  }

  public struct TimeoutConfig: Sendable, Equatable {
    public var requestSeconds = 30
    public var resourceSeconds = 60
    public init() {}
  }

  /// A profile: a stack per service.
  public struct ProfileConfig: Sendable, Equatable {
    /// The `MovieService` stack, outermost first, ending in `api` or `store`.
    public var movies: [String]
    public init(movies: [String]) { self.movies = movies }
  }

  /// The configuration built into Kernel (`Config/kernel.yaml` as it was built), with
  /// nothing over it.
  public static func builtIn(profile: String? = nil) throws -> KernelConfig {
    try ConfigDocument(text: BuiltInConfig.yaml, file: BuiltInConfig.name).resolve(profile: profile)
  }
}
