import Domain

/// A configuration that cannot be built. Every case names the file and key, and what would be
/// valid; the command front exits 78 on any of them.
public enum ConfigError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  case unknownName(file: String, key: String, name: String, valid: [String])
  case stackWithoutSource(file: String, key: String, stack: [String])
  case malformed(file: String, key: String, value: String, expected: String)
  case invalidEnvironment(file: String, key: String, reason: String)

  public var failure: ServiceFailure { .configuration }

  public var description: String {
    switch self {
    case .unknownName(let file, let key, let name, let valid):
      "\(file): \(key) names \"\(name)\", which is not one of: \(valid.joined(separator: ", "))."
    case .stackWithoutSource(let file, let key, let stack):
      "\(file): the stack \(key) [\(stack.joined(separator: ", "))] must end in a source, api or store."
    case .malformed(let file, let key, let value, let expected):
      "\(file): \(key) is \"\(value)\", but it must be \(expected)."
    case .invalidEnvironment(let file, let key, let reason):
      "\(file): \(key) is not usable: \(reason)"
    }
  }
}
