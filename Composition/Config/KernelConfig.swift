import Api
import Domain
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
///   `.tokenScheme` — string or empty — `Bearer`; `.insecure` — bool — false; `.transport` — a
///   catalog transport — `http` (Kernel's `sample` environment: `sample`, answered in process);
///   and the app's environment settings (`.apiKey`).
/// - `context` — a catalog context, `memory` | `persistent` — `persistent`: where the
///   environment and tokens live.
/// - `adapters` — list — `[defaultHeaders, authToken]`; `retriers` — list — `[authRefresh, backoff]`.
/// - `retry.maxRetries` — int — 2; `retry.baseDelayMs` — int — 200; `retry.retryAfterCapSeconds` — int — 30.
/// - `timeouts.requestSeconds` — int — 30; `timeouts.resourceSeconds` — int — 60;
///   `timeouts.callSeconds` — int — 60 (a whole call, retries included). Each 1 to 3600.
/// - `retry.*` ranges: `maxRetries` 0 to 10, `baseDelayMs` 0 to 60000, `retryAfterCapSeconds`
///   0 to 3600.
/// - `<service>` and `profiles.<name>.<service>` — list — the stack of each catalog service
///   (`movies`, `books`), outermost layer first, ending in one of its sources (`api`, `store`);
///   a profile without one uses the top level's.
/// - the app's own settings (`AppSetting`), read with the same precedence: `values`.
public struct KernelConfig: Sendable, Equatable {
  public var file: String
  public var profile: String
  public var environment: String
  public var environments: [String: EnvironmentConfig]
  /// The catalog context holding the environment and tokens.
  public var context: String
  public var adapters: [String]
  public var retriers: [String]
  public var retry: RetryConfig
  public var timeouts: TimeoutConfig
  public var profiles: [String: ProfileConfig]
  public var dataDir: String = ""
  public var baseURL: String?
  /// Each resolved value with its source, in the order `config show` prints them.
  public var settings: [Setting] = []
  /// The app's own settings, resolved with their defaults, by name.
  public var values: [String: Value] = [:]

  /// A resolved app setting.
  public enum Value: Sendable, Equatable {
    case string(String)
    case integer(Int)
    case boolean(Bool)
    case list([String])
  }

  /// The app setting `name` as text (a secret too), if set or defaulted.
  public func string(_ name: String) -> String? {
    if case .string(let text)? = values[name] { return text }
    return nil
  }

  /// The app setting `name` as a whole number, if set or defaulted.
  public func integer(_ name: String) -> Int? {
    if case .integer(let number)? = values[name] { return number }
    return nil
  }

  /// The app setting `name` as true or false, if set or defaulted.
  public func boolean(_ name: String) -> Bool? {
    if case .boolean(let flag)? = values[name] { return flag }
    return nil
  }

  /// The app setting `name` as a list, if set or defaulted.
  public func list(_ name: String) -> [String]? {
    if case .list(let list)? = values[name] { return list }
    return nil
  }

  /// One resolved value and where it came from.
  public struct Setting: Sendable, Equatable {
    public var key: String
    /// The value as shown to people: secrets (a password in a URL) are redacted.
    public var value: String
    public var source: ConfigDocument.Source
  }

  /// Where the value of `key` was written, as a message names it: (`the command line`,
  /// `--base-url`), (`the environment`, `KERNEL_BASE_URL`), (file, `profiles.api.baseURL`), or
  /// nil when it is a default.
  public func written(_ key: String) -> (file: String, key: String)? {
    switch settings.first(where: { $0.key == key })?.source {
    case .flag(let flag)?: ("the command line", flag)
    case .variable(let name)?: ("the environment", name)
    case .profile(let profile, let file)?: (file, "profiles.\(profile).\(key)")
    case .file(let file)?: (file, key)
    default: nil
    }
  }

  /// An environment as the file describes it.
  public struct EnvironmentConfig: Sendable, Equatable {
    public var baseURL: String
    public var tokenHeader = AuthToken.defaultHeader
    public var tokenScheme: String? = AuthToken.defaultScheme
    public var insecure = false
    /// The catalog transport that sends its requests: `http` unless it names another.
    public var transport = "http"
    /// The app's environment settings (`apiKey`), by name.
    public var values: [String: String] = [:]

    public init(
      baseURL: String, tokenHeader: String = AuthToken.defaultHeader,
      tokenScheme: String? = AuthToken.defaultScheme,
      insecure: Bool = false, transport: String = "http", values: [String: String] = [:]
    ) {
      self.baseURL = baseURL
      self.tokenHeader = tokenHeader
      self.tokenScheme = tokenScheme
      self.insecure = insecure
      self.transport = transport
      self.values = values
    }
  }

  /// Every number has a range; a value out of it is a config error naming the key and range.
  public struct RetryConfig: Sendable, Equatable {
    public var maxRetries = 2
    public var baseDelayMs = 200
    public var retryAfterCapSeconds = 30
    public static let maxRetriesRange = 0...10
    public static let baseDelayMsRange = 0...60_000
    public static let retryAfterCapSecondsRange = 0...3600
    public init() {}
  }

  public struct TimeoutConfig: Sendable, Equatable {
    /// One try with no data arriving.
    public var requestSeconds = 30
    /// One try, start to end.
    public var resourceSeconds = 60
    /// A whole call, every retry and wait included: past it the call fails (exit 69), and a
    /// layered stack answers from its cache.
    public var callSeconds = 60
    /// The range of each of them.
    public static let secondsRange = 1...3600
    public init() {}
  }

  /// A profile: a stack per service key, its own or the top level's.
  public struct ProfileConfig: Sendable, Equatable {
    public var stacks: [String: Stack]
    public init(stacks: [String: Stack]) { self.stacks = stacks }
  }

  /// A service's stack as written, outermost first, ending in a source; `key` is where it was
  /// written (`profiles.offline.movies`, or `movies` at the top level).
  public struct Stack: Sendable, Equatable {
    public var entries: [String]
    public var key: String
    public init(_ entries: [String], key: String) {
      self.entries = entries
      self.key = key
    }
  }

  /// The configuration built into Kernel (`Config/kernel.yaml` as it was built), with
  /// nothing over it.
  public static func builtIn(profile: String? = nil) throws -> KernelConfig {
    try ConfigDocument(text: BuiltInConfig.yaml, file: BuiltInConfig.name, app: .kernel)
      .resolve(profile: profile)
  }
}
