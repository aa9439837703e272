import Configuration

/// A key an app adds to its config: its type, default and one line of documentation.
public struct AppSetting: Sendable, Equatable {
  /// What a setting's value is, checked when the config is read.
  public enum Kind: Sendable, Equatable {
    /// Text, a whole number, `true` or `false`, or a list such as `[a, b]`.
    case string, integer, boolean, list
    /// Text never printed: `config show` and messages show it redacted.
    case secret
  }

  /// Where in the file it may be written.
  public enum Scope: Sendable, Equatable {
    /// `key:` at the top level only (Kernel's `profile`).
    case file
    /// `key:` at the top level, overridable in any profile's section.
    case app
    /// `environments.<name>.key`, read from the current environment (`ApiEnvironment.values`).
    case environment
  }

  /// The key, its levels joined by `.` (`timeouts.callSeconds`); for an environment's setting,
  /// the key below `environments.<name>.`.
  public let name: String
  /// What its value is.
  public let kind: Kind
  /// Where it may be written.
  public let scope: Scope
  /// As it would be written in the file; nil when the key is optional.
  public let defaultValue: String?
  /// One line of documentation, shown in the config reference.
  public let doc: String
  /// For an `.integer`: the values allowed; any other is a config error naming the range.
  public let range: ClosedRange<Int>?

  /// A setting `name` of `kind`, written in `scope`, with its default (as written in the file), its
  /// range for an integer, and `doc`.
  public init(
    _ name: String, _ kind: Kind, scope: Scope = .app, default defaultValue: String? = nil,
    range: ClosedRange<Int>? = nil, doc: String
  ) {
    self.name = name
    self.kind = kind
    self.scope = scope
    self.defaultValue = defaultValue
    self.range = range
    self.doc = doc
  }

  /// Where it stands in the file: `timeouts.callSeconds`, `environments.*.baseURL`.
  public var id: String { scope == .environment ? "environments.*.\(name)" : name }

  /// The id of the row a key of the file is read by: `environments.local.password` is
  /// `environments.*.password`'s.
  public static func id(of key: [String]) -> String {
    key.count > 2 && key[0] == "environments"
      ? "environments.*." + key.dropFirst(2).joined(separator: ".")
      : key.joined(separator: ".")
  }

  /// The key's levels.
  var path: [String] { name.split(separator: ".").map(String.init) }

  /// The default as the reader's defaults provider holds it, typed.
  var defaultContent: ConfigContent? {
    guard let defaultValue else { return nil }
    switch kind {
    case .string, .secret: return .string(defaultValue)
    case .integer: return Int(defaultValue).map { .int($0) }
    case .boolean: return ConfigSchema.boolean(defaultValue).map { .bool($0) }
    case .list:
      return .stringArray(defaultValue.split(separator: ",").map { $0.trimmingSpaces() })
    }
  }
}
