import Foundation

/// What a run adds to the configuration: where data lives, what the command line chose, and
/// where logs and warnings go.
public struct Runtime: Sendable {
  /// Where the cache, the outbox and the context live.
  public var dataDirectory: URL
  /// `--environment`, overriding the saved and the configured one.
  public var environment: String?
  /// `--base-url`, overriding the chosen environment's base URL.
  public var baseURL: String?
  /// Where the debug log goes (`-v`); nowhere by default.
  public var log: @Sendable (String) -> Void
  /// Where warnings go (stderr in the command front).
  public var warn: @Sendable (String) -> Void

  /// A run with its data dir, the environment and base URL the command line chose, and where its
  /// log and warnings go.
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
