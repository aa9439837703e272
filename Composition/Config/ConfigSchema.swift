import Configuration
import Injection
import Yams

/// The keys `Config/kernel.yaml` may hold and the shape of each value. The file is checked
/// against it before anything is read from it, so a misspelt key is an error that names the
/// closest valid key rather than a setting silently ignored.
enum ConfigSchema: Equatable, Sendable {
  case string, integer, boolean, list
  /// A mapping with these keys only.
  indirect case section([String: ConfigSchema])
  /// A mapping from names a person picks (environments, profiles) to sections of this shape.
  indirect case named(ConfigSchema)

  /// The whole file of `catalog`'s app, from its settings table: `profile` at the top level;
  /// every other row at the top level and in any profile's section (a dotted key as nested
  /// sections); a stack per service; the environment rows under `environments.<name>`.
  static func file(for catalog: Catalog) -> ConfigSchema {
    var environment: [String: ConfigSchema] = [:]
    var overridable: [String: ConfigSchema] = [:]
    var file: [String: ConfigSchema] = [:]
    for setting in catalog.settings.values {
      switch setting.scope {
      case .environment: environment[setting.name] = setting.kind.schema
      case .app: insert(setting.kind.schema, at: setting.path[...], into: &overridable)
      case .file: insert(setting.kind.schema, at: setting.path[...], into: &file)
      }
    }
    for key in catalog.services.keys { overridable[key] = overridable[key] ?? .list }
    overridable["environments"] = .named(.section(environment))
    file.merge(overridable) { own, _ in own }
    file["profiles"] = .named(.section(overridable))
    return .section(file)
  }

  /// `schema` at `path` in `keys`, sections made on the way.
  private static func insert(
    _ schema: ConfigSchema, at path: ArraySlice<String>, into keys: inout [String: ConfigSchema]
  ) {
    guard let first = path.first else { return }
    guard path.count > 1 else {
      keys[first] = schema
      return
    }
    var inner: [String: ConfigSchema] = [:]
    if case .section(let existing)? = keys[first] { inner = existing }
    insert(schema, at: path.dropFirst(), into: &inner)
    keys[first] = .section(inner)
  }

  var expectation: String {
    switch self {
    case .string: "a text value"
    case .integer: "a whole number"
    case .boolean: "true or false"
    case .list: "a list such as [a, b]"
    case .section, .named: "a section of keys"
    }
  }

  /// Checks `node` against this shape and adds its values, typed, to `values`; `path` is where
  /// it sits (`profiles.api`). The file is parsed with Yams' basic resolver (every scalar a
  /// string; no regular expressions compiled at start-up): the schema gives each its type.
  func check(
    _ node: Node, path: [String], file: String,
    into values: inout [AbsoluteConfigKey: ConfigValue]
  ) throws {
    func wrongType() -> ConfigError {
      .malformed(
        file: location(file, node.mark), key: path.joined(separator: "."),
        value: node.scalar?.string ?? "a \(node.kind)", expected: expectation)
    }
    let key = AbsoluteConfigKey(path)
    switch self {
    case .string:
      guard let scalar = node.scalar else { throw wrongType() }
      values[key] = ConfigValue(.string(scalar.string), isSecret: false)
    case .integer:
      guard let number = node.scalar.flatMap({ Int($0.string) }) else { throw wrongType() }
      values[key] = ConfigValue(.int(number), isSecret: false)
    case .boolean:
      guard let flag = node.scalar.flatMap({ Self.boolean($0.string) }) else { throw wrongType() }
      values[key] = ConfigValue(.bool(flag), isSecret: false)
    case .list:
      guard let sequence = node.sequence, sequence.allSatisfy({ $0.scalar != nil }) else {
        throw wrongType()
      }
      values[key] = ConfigValue(
        .stringArray(sequence.compactMap { $0.scalar?.string }), isSecret: false)
    case .section(let keys):
      guard let mapping = node.mapping else { throw wrongType() }
      for (keyNode, value) in mapping {
        let key = keyNode.string ?? ""
        guard let schema = keys[key] else {
          throw ConfigError.unknownKey(
            file: location(file, keyNode.mark), key: (path + [key]).joined(separator: "."),
            closest: closestName(to: key, in: Array(keys.keys)), valid: keys.keys.sorted())
        }
        try schema.check(value, path: path + [key], file: file, into: &values)
      }
    case .named(let schema):
      guard let mapping = node.mapping else { throw wrongType() }
      for (keyNode, value) in mapping {
        try schema.check(value, path: path + [keyNode.string ?? ""], file: file, into: &values)
      }
    }
  }

  /// YAML 1.1's words for true and false.
  static func boolean(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "true", "yes", "on": true
    case "false", "no", "off": false
    default: nil
    }
  }

  /// `file:line:column`, as compilers and editors print places.
  func location(_ file: String, _ mark: Mark?) -> String {
    guard let mark else { return file }
    return "\(file):\(mark.line):\(mark.column)"
  }
}

extension AppSetting.Kind {
  var schema: ConfigSchema {
    switch self {
    case .string, .secret: .string
    case .integer: .integer
    case .boolean: .boolean
    case .list: .list
    }
  }
}

extension Node {
  fileprivate var kind: String {
    switch self {
    case .scalar: "value"
    case .mapping: "section"
    case .sequence: "list"
    case .alias: "alias"
    }
  }
}
