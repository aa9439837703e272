import Configuration
import Foundation
import Yams

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

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
  private var flags: InMemoryProvider
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
    if let bound = YAMLBounds.problem(in: text) {
      throw ConfigError.refused(
        file: "\(file):\(bound.line):\(bound.column)", problem: bound.problem)
    }
    do {
      // Only nodes are composed (nothing is constructed from them), and the text is UTF-8: an
      // empty constructor and an explicit encoding spare building Yams' default tag maps and
      // reading the whole environment for YAMS_DEFAULT_ENCODING.
      root = try Yams.compose(yaml: text, .basic, Constructor([:], [:], [:]), .utf8)
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
    self.flags = Self.provider(flags)
    self.flagNames = Self.flagForKey
  }

  /// This document with `flags` over it instead of the ones it was read with: the file is not
  /// read or checked again. For a config read before the command line was parsed.
  public func with(flags: [String: String]) -> ConfigDocument {
    var copy = self
    copy.flags = Self.provider(flags)
    return copy
  }

  private static func provider(_ flags: [String: String]) -> InMemoryProvider {
    var values: [AbsoluteConfigKey: ConfigValue] = [:]
    for (key, value) in flags {
      values[AbsoluteConfigKey([key])] = ConfigValue(.string(value), isSecret: false)
    }
    return InMemoryProvider(name: "flags", values: values)
  }

  /// The file `--config` / `<PREFIX>_CONFIG` names, else the app's config file under the
  /// working directory when there is one, else the copy built into the app.
  public static func load(
    path: String?, workingDirectory: URL, variables: [String: String] = [:],
    flags: [String: String] = [:], app: KernelApp = .kernel
  ) throws -> ConfigDocument {
    let variable = "\(app.variablePrefix)_CONFIG"
    // An empty variable means unset, like every other one.
    let explicit = path ?? variables[variable].flatMap { $0.isEmpty ? nil : $0 }
    let directory = workingDirectory.path
    let local = directory + (directory.hasSuffix("/") ? "" : "/") + app.configFile
    let found = FileManager.default.fileExists(atPath: local) ? app.configFile : nil
    guard let chosen = explicit ?? (app.builtInConfig == nil ? app.configFile : found) else {
      return try ConfigDocument(
        text: app.builtInConfig?.yaml ?? "", file: app.builtInConfig?.name ?? app.configFile,
        variables: variables, flags: flags, app: app)
    }
    let url = URL(fileURLWithPath: chosen, relativeTo: workingDirectory)
    let text: String
    do {
      text = try readText(url.path)
    } catch let problem as UnreadableFile {
      let key = path != nil ? "--config" : explicit != nil ? variable : "the file"
      throw ConfigError.unusable(file: chosen, key: key, reason: problem.reason)
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

  /// Why a config file could not be read, as the system or the bounds say it.
  private struct UnreadableFile: Error { let reason: String }

  /// The UTF-8 text of the regular file at `path`. Its kind and size are checked first, so a
  /// FIFO or a device is never opened (it could block or never end) and a huge file is never
  /// read; every failure is the real reason.
  private static func readText(_ path: String) throws -> String {
    var status = stat()
    guard stat(path, &status) == 0 else {
      throw UnreadableFile(reason: "it cannot be read (\(String(cString: strerror(errno))))")
    }
    switch status.st_mode & S_IFMT {
    case S_IFREG: break
    case S_IFDIR: throw UnreadableFile(reason: "it is a directory, not a file")
    case S_IFIFO: throw UnreadableFile(reason: "it is a FIFO, not a regular file")
    case S_IFCHR, S_IFBLK: throw UnreadableFile(reason: "it is a device, not a regular file")
    case S_IFSOCK: throw UnreadableFile(reason: "it is a socket, not a regular file")
    default: throw UnreadableFile(reason: "it is not a regular file")
    }
    guard Int(status.st_size) <= YAMLBounds.maximumBytes else {
      throw UnreadableFile(
        reason:
          "it is \(status.st_size) bytes; a config is at most \(YAMLBounds.maximumBytes) bytes")
    }
    guard let handle = FileHandle(forReadingAtPath: path) else {
      throw UnreadableFile(reason: "it cannot be read (\(String(cString: strerror(errno))))")
    }
    defer { try? handle.close() }
    let data: Data
    do {
      data = try handle.read(upToCount: YAMLBounds.maximumBytes + 1) ?? Data()
    } catch {
      throw UnreadableFile(reason: "it cannot be read (\((error as NSError).localizedDescription))")
    }
    guard data.count <= YAMLBounds.maximumBytes else {
      throw UnreadableFile(reason: "it is over \(YAMLBounds.maximumBytes) bytes")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw UnreadableFile(reason: "it is not UTF-8 text")
    }
    return text
  }
}
