import Api
import Domain
import Foundation
import Store

/// The resolved configuration Kernel builds its object graph from: every row of the app's
/// settings table (`AppSetting.kernel`, then the app's own) read through the config's
/// `ConfigReader`, with the profile's section applied over the top level. The keys, their
/// types, defaults, ranges and flags are the table's (`ConfigReference` renders it); `settings`
/// says where each value came from.
public struct KernelConfig: Sendable, Equatable {
  /// The config file read, or the built-in config's name.
  public var file: String
  /// The profile chosen.
  public var profile: String
  /// The api environments, by name.
  public var environments: [String: EnvironmentConfig]
  /// The profiles, by name.
  public var profiles: [String: ProfileConfig]
  /// Every top-level row's value, by key (`timeouts.callSeconds`, an app's `shelf`).
  public var values: [String: Value]
  /// Each resolved value with its source, in the order `config show` prints them.
  public var settings: [Setting] = []

  /// A config of these values, with no sources noted.
  public init(
    file: String, profile: String, environments: [String: EnvironmentConfig],
    profiles: [String: ProfileConfig], values: [String: Value]
  ) {
    self.file = file
    self.profile = profile
    self.environments = environments
    self.profiles = profiles
    self.values = values
  }

  /// The api environment used when none is chosen.
  public var environment: String {
    get { string("environment") ?? "" }
    set { values["environment"] = .string(newValue) }
  }
  /// Replaces the chosen environment's base URL.
  public var baseURL: String? {
    get { string("baseURL") }
    set { values["baseURL"] = newValue.map { .string($0) } }
  }
  /// The data dir; empty for the default one.
  public var dataDir: String {
    get { string("dataDir") ?? "" }
    set { values["dataDir"] = .string(newValue) }
  }
  /// The catalog context holding the environment and tokens.
  public var context: String {
    get { string("context") ?? "" }
    set { values["context"] = .string(newValue) }
  }
  /// The request adapters, in order.
  public var adapters: [String] {
    get { list("adapters") ?? [] }
    set { values["adapters"] = .list(newValue) }
  }
  /// The request retriers, in order.
  public var retriers: [String] {
    get { list("retriers") ?? [] }
    set { values["retriers"] = .list(newValue) }
  }
  /// `retry.*`.
  public var retry: RetryConfig {
    RetryConfig(
      maxRetries: integer("retry.maxRetries") ?? 0, baseDelayMs: integer("retry.baseDelayMs") ?? 0,
      retryAfterCapSeconds: integer("retry.retryAfterCapSeconds") ?? 0)
  }
  /// `cache.maxBytes` and `cache.maxAgeDays` as the store's budget.
  public var cacheBudget: SQLiteCacheStore.Budget {
    let days = integer("cache.maxAgeDays") ?? 0
    return SQLiteCacheStore.Budget(
      maxBytes: (integer("cache.maxBytes")).map(Int64.init),
      maxAge: days > 0 ? TimeInterval(days) * 86_400 : nil)
  }
  /// `timeouts.*`.
  public var timeouts: TimeoutConfig {
    TimeoutConfig(
      requestSeconds: integer("timeouts.requestSeconds") ?? 1,
      resourceSeconds: integer("timeouts.resourceSeconds") ?? 1,
      callSeconds: integer("timeouts.callSeconds") ?? 1)
  }

  /// A resolved setting.
  public enum Value: Sendable, Equatable {
    /// Text (a secret too).
    case string(String)
    /// A whole number.
    case integer(Int)
    /// `true` or `false`.
    case boolean(Bool)
    /// A list.
    case list([String])
  }

  /// The setting `name` as text (a secret too), if set or defaulted.
  public func string(_ name: String) -> String? {
    if case .string(let text)? = values[name] { return text }
    return nil
  }

  /// The setting `name` as a whole number, if set or defaulted.
  public func integer(_ name: String) -> Int? {
    if case .integer(let number)? = values[name] { return number }
    return nil
  }

  /// The setting `name` as true or false, if set or defaulted.
  public func boolean(_ name: String) -> Bool? {
    if case .boolean(let flag)? = values[name] { return flag }
    return nil
  }

  /// The setting `name` as a list, if set or defaulted.
  public func list(_ name: String) -> [String]? {
    if case .list(let list)? = values[name] { return list }
    return nil
  }

  /// One resolved value and where it came from.
  public struct Setting: Sendable, Equatable {
    /// The key (`timeouts.callSeconds`).
    public var key: String
    /// The value as shown to people: secrets (a password in a URL) are redacted.
    public var value: String
    /// Where the value came from.
    public var source: ConfigDocument.Source

    /// Where it was written, as a message names it: (`the command line`, `--base-url`),
    /// (`the environment`, `KERNEL_BASE_URL`), (file, `profiles.api.baseURL`), or nil for a
    /// default.
    public var written: (file: String, key: String)? {
      switch source {
      case .flag(let flag): ("the command line", flag)
      case .variable(let name): ("the environment", name)
      case .profile(let profile, let file): (file, "profiles.\(profile).\(key)")
      case .file(let file): (file, key)
      case .builtInDefault: nil
      }
    }
  }

  /// Where the value of `key` was written (see `Setting.written`); nil when it is a default.
  public func written(_ key: String) -> (file: String, key: String)? {
    settings.first { $0.key == key }?.written
  }

  /// An environment as the file describes it.
  public struct EnvironmentConfig: Sendable, Equatable {
    /// Its base URL, as written.
    public var baseURL: String
    /// The header a token goes in.
    public var tokenHeader = AuthToken.defaultHeader
    /// The token's scheme (`Bearer`); nil for a bare token.
    public var tokenScheme: String? = AuthToken.defaultScheme
    /// Whether plain `http` to another host than loopback is allowed.
    public var insecure = false
    /// The catalog transport that sends its requests: `http` unless it names another.
    public var transport = "http"
    /// Its authenticator as written (`oauth2(grant: password)`): `none` unless it names one.
    public var auth = "none"
    /// The environment's other settings by name: the authenticators' (`apiKey`,
    /// `clientSecret`, `username`, `password`) and the app's own.
    public var values: [String: String] = [:]

    /// The environment of the rows read for it: Kernel's own and the app's.
    init(baseURL: String, values read: [String: Value]) {
      self.baseURL = baseURL
      tokenHeader = read["tokenHeader"]?.text ?? tokenHeader
      tokenScheme = read["tokenScheme"]?.text.flatMap { $0.isEmpty ? nil : $0 }
      if case .boolean(let flag)? = read["insecure"] { insecure = flag }
      transport = read["transport"]?.text ?? transport
      auth = read["auth"]?.text ?? auth
      let typed: Set = ["baseURL", "tokenHeader", "tokenScheme", "insecure", "transport", "auth"]
      values = read.filter { !typed.contains($0.key) }.compactMapValues(\.text)
    }

    /// An environment of these values.
    public init(
      baseURL: String, tokenHeader: String = AuthToken.defaultHeader,
      tokenScheme: String? = AuthToken.defaultScheme,
      insecure: Bool = false, transport: String = "http", auth: String = "none",
      values: [String: String] = [:]
    ) {
      self.baseURL = baseURL
      self.tokenHeader = tokenHeader
      self.tokenScheme = tokenScheme
      self.insecure = insecure
      self.transport = transport
      self.auth = auth
      self.values = values
    }
  }

  /// `retry.*`, as the table documents them.
  public struct RetryConfig: Sendable, Equatable {
    /// `retry.maxRetries`.
    public var maxRetries: Int
    /// `retry.baseDelayMs`.
    public var baseDelayMs: Int
    /// `retry.retryAfterCapSeconds`.
    public var retryAfterCapSeconds: Int
  }

  /// `timeouts.*`, as the table documents them.
  public struct TimeoutConfig: Sendable, Equatable {
    /// `timeouts.requestSeconds`.
    public var requestSeconds: Int
    /// `timeouts.resourceSeconds`.
    public var resourceSeconds: Int
    /// `timeouts.callSeconds`.
    public var callSeconds: Int
  }

  /// A profile: a stack per service key, its own or the top level's.
  public struct ProfileConfig: Sendable, Equatable {
    /// Its stacks, by service key.
    public var stacks: [String: Stack]
    /// A profile of `stacks`.
    public init(stacks: [String: Stack]) { self.stacks = stacks }
  }

  /// A service's stack as written, outermost first, ending in a source; `key` is where it was
  /// written (`profiles.offline.books`, or `books` at the top level).
  public struct Stack: Sendable, Equatable {
    /// The entries, outermost first (`cache(networkFirst)`, `api`).
    public var entries: [String]
    /// Where it was written.
    public var key: String
    /// A stack of `entries` written at `key`.
    public init(_ entries: [String], key: String) {
      self.entries = entries
      self.key = key
    }
  }

  /// The configuration built into `app` (`KernelApp.builtInConfig`; the table's defaults when
  /// it has none), with nothing over it.
  public static func builtIn(_ app: KernelApp, profile: String? = nil) throws -> KernelConfig {
    try ConfigDocument(
      text: app.builtInConfig?.yaml ?? "", file: app.builtInConfig?.name ?? app.configFile,
      app: app
    ).resolve(profile: profile)
  }
}

/// A stack as the config writes it: a list of entries, outermost layer first, ending in a source.
enum StackEntry {
  /// The entries as written: a YAML flow list (`[cache(cacheFirst, 300), api]`) splits an
  /// entry's arguments at their comma, so pieces are joined again until parentheses balance.
  static func rejoined(_ pieces: [String]) -> [String] {
    var entries: [String] = []
    var open = false
    for piece in pieces {
      if open, let last = entries.popLast() {
        entries.append(last + ", " + piece.trimmingSpaces())
      } else {
        entries.append(piece)
      }
      let text = entries[entries.count - 1]
      open = text.filter { $0 == "(" }.count > text.filter { $0 == ")" }.count
    }
    return entries
  }
}
