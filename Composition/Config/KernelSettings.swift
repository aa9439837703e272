import Api
import Domain

extension AppSetting {
  /// Kernel's own keys: the first rows of every app's settings table, registered by
  /// `KernelAssembly` through `Catalog.setting` as an app registers its own. The table feeds
  /// the schema check, the defaults, `config show`, the flags `--help` lists and the config
  /// reference (`ConfigReference`); a key's default is written here and nowhere else.
  public static let kernel: [AppSetting] = [
    AppSetting(
      "profile", .string, scope: .file, default: "layered",
      doc: "the profile to build: one of the names under `profiles`"),
    AppSetting(
      "environment", .string, default: "sample",
      doc: "the api environment, unless `env use` saved another"),
    AppSetting("baseURL", .string, doc: "replaces the chosen environment's base URL"),
    AppSetting(
      "dataDir", .string, default: "",
      doc:
        "the cache database and saved context, 0700; empty: `$XDG_DATA_HOME/<app>`, else `~/.local/share/<app>`"
    ),
    AppSetting(
      "context", .string, default: "persistent",
      doc:
        "where the current environment and credentials are kept: `memory` (for one run), or"
        + " `persistent` (`context.json` in the data dir, 0600)"),
    AppSetting(
      "adapters", .list, default: "defaultHeaders", doc: "request adapters, in order"),
    AppSetting(
      "retriers", .list, default: "backoff", doc: "request retriers, in order"),
    AppSetting(
      "cache.maxBytes", .integer, default: "104857600", range: 65_536...(1 << 40),
      doc:
        "the most the cache file may hold; past it the least recently used answers go, in the write that stored the newest"
    ),
    AppSetting(
      "cache.maxAgeDays", .integer, default: "0", range: 0...36_500,
      doc: "answers fetched longer ago go when the next is stored; 0 keeps them"),
    AppSetting(
      "retry.maxRetries", .integer, default: "2", range: 0...10,
      doc: "backoff retries after the first try"),
    AppSetting(
      "retry.baseDelayMs", .integer, default: "200", range: 0...60_000,
      doc: "the first backoff delay; doubles, with jitter"),
    AppSetting(
      "retry.retryAfterCapSeconds", .integer, default: "30", range: 0...3600,
      doc: "a longer `Retry-After` fails at once"),
    AppSetting(
      "timeouts.requestSeconds", .integer, default: "30", range: 1...3600,
      doc: "one try with no data arriving"),
    AppSetting(
      "timeouts.resourceSeconds", .integer, default: "60", range: 1...3600,
      doc: "one try, start to end"),
    AppSetting(
      "timeouts.callSeconds", .integer, default: "60", range: 1...3600,
      doc:
        "a whole call, every retry and wait included: past it exit 69, and a layered stack answers from its cache"
    ),
    AppSetting(
      "baseURL", .string, scope: .environment,
      doc: "where the routes live (required); `http://` only to loopback unless `insecure`"),
    AppSetting(
      "tokenHeader", .string, scope: .environment, default: AuthToken.defaultHeader,
      doc: "the header the token travels in"),
    AppSetting(
      "tokenScheme", .string, scope: .environment, default: AuthToken.defaultScheme,
      doc: "written before the token; empty for none"),
    AppSetting(
      "auth", .string, scope: .environment, default: "none",
      doc:
        "its authenticator: `none`, `plainToken(route: auth)`, `oauth2(grant: password)`, `apiKey(header: X-Api-Key)`, `basic`, or an app's"
    ),
    AppSetting(
      "clientSecret", .secret, scope: .environment,
      doc: "the OAuth 2.0 client's secret (`oauth2`)"),
    AppSetting(
      "apiKey", .secret, scope: .environment,
      doc: "the key the `apiKey` authenticator or adapter sends"),
    AppSetting(
      "username", .string, scope: .environment,
      doc: "the user `basic` sends, when the base URL names none"),
    AppSetting(
      "password", .secret, scope: .environment, doc: "the password `basic` sends"),
    AppSetting(
      "insecure", .boolean, scope: .environment, default: "false",
      doc: "allow plain `http://` to a host that is not loopback"),
    AppSetting(
      "transport", .string, scope: .environment, default: "http",
      doc: "the transport that sends its requests: `http`, or one the app registers (`sample`)"),
  ]
}
