import Configuration
import Foundation
import Yams

/// A config file, read and checked against the app's schema (Kernel's keys, its services'
/// stacks, its own settings), with this run's `<PREFIX>_*` variables and flags over it. Values are looked up through swift-configuration's providers in the order of
/// precedence: flag > variable > the profile's section > the file's top level > the default.
public struct ConfigDocument: Sendable {
  /// The file as people should see it named: a path, or "the built-in config".
  public let file: String
  /// Profile names, as the file lists them.
  public let profileNames: [String]
  /// The app whose config this is: its variable prefix, catalog and settings.
  public let app: KernelApp
  private let environmentNames: [String: [String]]
  /// The file's values, checked and typed by the schema.
  private let snapshot: InMemoryProvider
  private let variables: EnvironmentVariablesProvider
  private let flags: InMemoryProvider
  private let flagNames: [String: String]

  /// The command-line flags that set config keys, by key.
  public static let flagForKey = [
    "profile": "--profile", "environment": "--environment", "baseURL": "--base-url",
    "dataDir": "--data-dir",
  ]

  /// Parses and checks `text`; `flags` maps config keys (`profile`, `baseURL`…) to flag values.
  public init(
    text: String, file: String, variables: [String: String] = [:], flags: [String: String] = [:],
    app: KernelApp = .kernel
  ) throws {
    self.app = app
    let root: Node?
    do {
      root = try Yams.compose(yaml: text, .basic)
    } catch let error as YamlError {
      throw ConfigError.syntax(file: Self.place(of: error, in: file), problem: Self.problem(error))
    }
    guard let root, root.mapping != nil else {
      throw ConfigError.malformed(
        file: file, key: "the file", value: root?.scalar?.string ?? "empty",
        expected: "a section of keys such as profile: and profiles:")
    }
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    try ConfigSchema.file(for: app.catalog).check(root, path: [], file: file, into: &values)
    snapshot = InMemoryProvider(name: file, values: values)
    let profiles = root.mapping?["profiles"]?.mapping
    self.profileNames = profiles?.keys.compactMap(\.string) ?? []
    var environmentNames: [String: [String]] = [
      "": root.mapping?["environments"]?.mapping?.keys.compactMap(\.string) ?? []
    ]
    for (name, section) in profiles ?? [:] {
      let own = section.mapping?["environments"]?.mapping?.keys.compactMap(\.string) ?? []
      environmentNames[name.string ?? ""] = own
    }
    self.environmentNames = environmentNames
    self.file = file
    self.variables = EnvironmentVariablesProvider(
      environmentVariables: variables.filter { $0.key.hasPrefix(app.variablePrefix + "_") })
    values = [:]
    for (key, value) in flags {
      values[AbsoluteConfigKey([key])] = ConfigValue(.string(value), isSecret: false)
    }
    self.flags = InMemoryProvider(name: "flags", values: values)
    self.flagNames = Self.flagForKey
  }

  /// The file `--config` / `<PREFIX>_CONFIG` names, else the app's config file under the
  /// working directory when there is one, else the copy built into the app.
  public static func load(
    path: String?, workingDirectory: URL, variables: [String: String] = [:],
    flags: [String: String] = [:], app: KernelApp = .kernel
  ) throws -> ConfigDocument {
    let variable = "\(app.variablePrefix)_CONFIG"
    let explicit = path ?? variables[variable]
    let local = workingDirectory.appendingPathComponent(app.configFile)
    let found = FileManager.default.fileExists(atPath: local.path) ? app.configFile : nil
    guard let chosen = explicit ?? (app.builtInConfig == nil ? app.configFile : found) else {
      return try ConfigDocument(
        text: app.builtInConfig?.yaml ?? "", file: app.builtInConfig?.name ?? app.configFile,
        variables: variables, flags: flags, app: app)
    }
    let url = URL(fileURLWithPath: chosen, relativeTo: workingDirectory)
    let text: String
    do {
      text = try String(contentsOf: url, encoding: .utf8)
    } catch {
      let key = path != nil ? "--config" : explicit != nil ? variable : "the file"
      throw ConfigError.unusable(
        file: chosen, key: key, reason: "it cannot be read as UTF-8 text (\(Self.reason(error)))")
    }
    return try ConfigDocument(
      text: text, file: chosen, variables: variables, flags: flags, app: app)
  }

  // MARK: Looking values up

  /// Where a resolved value came from.
  public enum Source: Sendable, Equatable, CustomStringConvertible {
    case flag(String)
    case variable(String)
    case profile(String, file: String)
    case file(String)
    case builtInDefault

    public var description: String {
      switch self {
      case .flag(let name): "flag \(name)"
      case .variable(let name): "variable \(name)"
      case .profile(let name, let file): "profile \(name) in \(file)"
      case .file(let file): file
      case .builtInDefault: "default"
      }
    }
  }

  struct Found {
    let content: ConfigContent
    let source: Source
    /// How to name this key in a message: the flag, the variable or the file key.
    let key: String
    let file: String
  }

  /// The first of flag, variable, profile section and top level that sets `key`.
  func lookup(_ key: [String], _ type: ConfigType, profile: String?) throws -> Found? {
    let dotted = key.joined(separator: ".")
    if key.count == 1, let flag = flagNames[key[0]],
      let value = try flags.value(forKey: AbsoluteConfigKey(key), type: .string).value
    {
      return Found(content: value.content, source: .flag(flag), key: flag, file: "the command line")
    }
    let variableKey = AbsoluteConfigKey([app.variablePrefix.lowercased()] + key)
    let raw = try variables.value(forKey: variableKey, type: .string)
    if case .string(let text)? = raw.value?.content {
      do {
        if let value = try variables.value(forKey: variableKey, type: type).value {
          return Found(
            content: value.content, source: .variable(raw.encodedKey), key: raw.encodedKey,
            file: "the environment")
        }
      } catch {}
      throw ConfigError.malformed(
        file: "the environment", key: raw.encodedKey, value: text,
        expected: Self.expectation(type))
    }
    if let profile, key != ["profile"],
      let value = try snapshot.value(
        forKey: AbsoluteConfigKey(["profiles", profile] + key), type: type
      )
      .value
    {
      return Found(
        content: value.content, source: .profile(profile, file: file),
        key: "profiles.\(profile).\(dotted)", file: file)
    }
    if let value = try snapshot.value(forKey: AbsoluteConfigKey(key), type: type).value {
      return Found(content: value.content, source: .file(file), key: dotted, file: file)
    }
    return nil
  }

  /// Environment names the file and `profile`'s section define.
  func environments(profile: String?) -> [String] {
    Array(Set((environmentNames[""] ?? []) + (profile.flatMap { environmentNames[$0] } ?? [])))
      .sorted()
  }

  static func expectation(_ type: ConfigType) -> String {
    switch type {
    case .int: "a whole number"
    case .bool: "true or false"
    case .stringArray: "a comma-separated list"
    default: "a text value"
    }
  }

  // MARK: Syntax errors

  private static func place(of error: YamlError, in file: String) -> String {
    switch error {
    case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _):
      "\(file):\(mark.line):\(mark.column)"
    case .duplicatedKeysInMapping(_, let context):
      "\(file):\(context.mark.line):\(context.mark.column)"
    default: file
    }
  }

  private static func problem(_ error: YamlError) -> String {
    switch error {
    case .scanner(let context, let problem, _, _), .parser(let context, let problem, _, _),
      .composer(let context, let problem, _, _):
      [problem, context.map { $0.text }].compactMap { $0 }.joined(separator: " ")
    case .duplicatedKeysInMapping(let duplicates, _):
      "the key \(duplicates.joined(separator: ", ")) appears twice"
    case .reader(let problem, _, _, _): problem
    default: "\(error)"
    }
  }

  private static func reason(_ error: any Error) -> String {
    (error as NSError).localizedDescription
  }
}
