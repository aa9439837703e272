import Domain
import Injection

/// A configuration that cannot be built. Every case names the file and key, and what would be
/// valid; the command front exits 78 on any of them.
public enum ConfigError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// `key` names `name`, which is none of `valid`.
  case unknownName(file: String, key: String, name: String, valid: [String])
  /// The stack at `key` does not end in one of `sources`.
  case stackWithoutSource(file: String, key: String, stack: [String], sources: String)
  /// The value at `key` is `value`, not what it must be (`expected`).
  case malformed(file: String, key: String, value: String, expected: String)
  /// The environment at `key` cannot be used, for `reason`.
  case invalidEnvironment(file: String, key: String, reason: String)
  /// A key the schema does not know, with the valid key it most likely meant.
  case unknownKey(file: String, key: String, closest: String?, valid: [String])
  /// An entry's argument label its component does not take.
  case unknownLabel(
    file: String, key: String, entry: String, label: String, closest: String?, valid: [String])
  /// The file is not YAML; `file` ends in `:line:column`.
  case syntax(file: String, problem: String)
  /// Past a bound on the work of reading it (size, aliases, nesting: `YAMLBounds`).
  case refused(file: String, problem: String)
  /// The file cannot be read, or the data dir cannot be used.
  case unusable(file: String, key: String, reason: String)

  /// Always `.configuration` (exit 78).
  public var failure: ServiceFailure { .configuration }

  /// One line whatever the file held: control characters are escaped, long values cut.
  public var description: String { Self.oneLine(text) }

  private var text: String {
    switch self {
    case .unknownName(let file, let key, let name, let valid) where valid.isEmpty:
      "\(file): \(key) names \"\(Self.shown(name))\", but the file defines none; a config file replaces the"
        + " built-in one, so it needs its own."
    case .unknownName(let file, let key, let name, let valid):
      "\(file): \(key) names \"\(Self.shown(name))\", which is not one of: \(valid.joined(separator: ", "))"
        + (closestName(to: name, in: valid.map { String($0.prefix { $0 != "(" }) })
          .map { "; did you mean \($0)?" } ?? ".")
    case .stackWithoutSource(let file, let key, let stack, let sources):
      "\(file): the stack \(key) [\(stack.joined(separator: ", "))] must end in a source, \(sources)."
    case .malformed(let file, let key, let value, let expected):
      "\(file): \(key) is \"\(Self.shown(value))\", but it must be \(expected)."
    case .invalidEnvironment(let file, let key, let reason):
      "\(file): \(key) is not usable: \(reason)"
    case .unknownKey(let file, let key, let closest?, _):
      "\(file): unknown key \(Self.shown(key)); did you mean \(closest)?"
    case .unknownKey(let file, let key, nil, let valid):
      "\(file): unknown key \(Self.shown(key)); the keys here are: \(valid.joined(separator: ", "))."
    case .unknownLabel(let file, let key, let entry, let label, let closest?, _):
      "\(file): \(key) \(Self.shown(entry)) has no label \(Self.shown(label)); did you mean \(closest)?"
    case .unknownLabel(let file, let key, let entry, let label, nil, let valid) where valid.isEmpty:
      "\(file): \(key) \(Self.shown(entry)) has no label \(Self.shown(label)); it takes none."
    case .unknownLabel(let file, let key, let entry, let label, nil, let valid):
      "\(file): \(key) \(Self.shown(entry)) has no label \(Self.shown(label)); its labels are: \(valid.joined(separator: ", "))."
    case .syntax(let file, let problem):
      "\(file): the file is not valid YAML: \(problem)."
    case .refused(let file, let problem):
      "\(file): the file is refused: \(problem)."
    case .unusable(let file, let key, let reason):
      "\(file): \(key) cannot be used: \(reason)."
    }
  }

  /// A value from the file as shown in a message: at most 60 characters.
  static func shown(_ value: String) -> String {
    value.count > 60 ? String(value.prefix(59)) + "…" : value
  }

  /// `text` with newlines, tabs and other control characters written as escapes.
  static func oneLine(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case _ where scalar.properties.generalCategory == .control:
        out += "\\u{\(String(scalar.value, radix: 16))}"
      default: out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
