import Layers

/// One entry of a configured stack as written: a layer such as `cache(networkFirst)`, or a source.
enum StackEntry: Equatable {
  case source(Source)
  case logging
  case dedupe
  case memory(capacity: Int, maxAgeSeconds: Int)
  case cache(CachePolicy)

  enum Source: String, CaseIterable {
    case api, store
  }

  static let layerNames = ["cache(<policy>)", "dedupe", "logging", "memory(<capacity>, <seconds>)"]
  static let policyNames = [
    "cacheOnly", "networkOnly", "cacheFirst(<seconds>)", "networkFirst", "cacheThenNetwork",
    "staleWhileRevalidate(<seconds>)",
  ]

  /// Parses `text` found at `key` of `file`.
  static func parse(_ text: String, file: String, key: String) throws -> StackEntry {
    let trimmed = text.trimmingCharacters(in: .whitespaces)
    let name = String(trimmed.prefix { $0 != "(" })
    var arguments: [String] = []
    if let open = trimmed.firstIndex(of: "("), trimmed.hasSuffix(")") {
      arguments = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    } else if trimmed.contains("(") {
      throw ConfigError.malformed(
        file: file, key: key, value: text, expected: "a name with arguments in parentheses")
    }
    func number(_ index: Int, default value: Int) throws -> Int {
      guard index < arguments.count else { return value }
      guard let parsed = Int(arguments[index]), parsed > 0 else {
        throw ConfigError.malformed(
          file: file, key: key, value: text, expected: "a whole number of seconds or items above 0")
      }
      return parsed
    }
    switch name {
    case "api": return .source(.api)
    case "store": return .source(.store)
    case "logging": return .logging
    case "dedupe": return .dedupe
    case "memory":
      return .memory(
        capacity: try number(0, default: 64), maxAgeSeconds: try number(1, default: 60))
    case "cache":
      let policy = arguments.first ?? "networkFirst"
      switch policy {
      case "cacheOnly": return .cache(.cacheOnly)
      case "networkOnly": return .cache(.networkOnly)
      case "networkFirst": return .cache(.networkFirst)
      case "cacheThenNetwork": return .cache(.cacheThenNetwork)
      case "cacheFirst": return .cache(.cacheFirst(maxAge: .seconds(try number(1, default: 300))))
      case "staleWhileRevalidate":
        return .cache(.staleWhileRevalidate(maxAge: .seconds(try number(1, default: 300))))
      default:
        throw ConfigError.unknownName(file: file, key: key, name: policy, valid: policyNames)
      }
    default:
      throw ConfigError.unknownName(
        file: file, key: key, name: name, valid: Source.allCases.map(\.rawValue) + layerNames)
    }
  }

  /// A whole stack: layers outermost first, then exactly one source, last.
  static func parseStack(_ written: [String], file: String, key: String) throws -> Stack {
    let entries = rejoined(written)
    let parsed = try entries.enumerated().map {
      try parse($0.element, file: file, key: "\(key)[\($0.offset)]")
    }
    guard case .source(let source)? = parsed.last else {
      throw ConfigError.stackWithoutSource(file: file, key: key, stack: entries)
    }
    let layers = try parsed.dropLast().map { entry -> Layer in
      switch entry {
      case .source: throw ConfigError.stackWithoutSource(file: file, key: key, stack: entries)
      case .logging: return .logging
      case .dedupe: return .dedupe
      case .memory(let capacity, let seconds):
        return .memory(capacity: capacity, maxAgeSeconds: seconds)
      case .cache(let policy): return .cache(policy)
      }
    }
    return Stack(layers: layers, source: source)
  }

  /// The entries as written: a YAML flow list (`[cache(cacheFirst, 300), api]`) splits an
  /// entry's arguments at their comma, so pieces are joined again until parentheses balance.
  static func rejoined(_ pieces: [String]) -> [String] {
    var entries: [String] = []
    var open = false
    for piece in pieces {
      if open, let last = entries.popLast() {
        entries.append(last + ", " + piece.trimmingCharacters(in: .whitespaces))
      } else {
        entries.append(piece)
      }
      let text = entries[entries.count - 1]
      open = text.filter { $0 == "(" }.count > text.filter { $0 == ")" }.count
    }
    return entries
  }

  /// A parsed stack: only layers, then one source.
  struct Stack {
    let layers: [Layer]
    let source: Source

    var usesStore: Bool {
      source == .store || layers.contains { if case .cache = $0 { true } else { false } }
    }
  }

  /// A stack entry that wraps a source.
  enum Layer: Equatable, Sendable {
    case logging, dedupe
    case memory(capacity: Int, maxAgeSeconds: Int)
    case cache(CachePolicy)
  }
}
