import Injection
import Synchronization

/// The arguments a config entry gives a component, as written: `cache(cacheFirst, 300)` has
/// two positional ones, `apiKey(header: X-Api-Key)` one named `header`. A component reads them
/// typed; a missing or malformed one is a config error naming the file and key, and a label
/// the component never asked for (`maxAg: 5`) is one naming the closest it did.
public struct Parameters: Sendable, Equatable {
  /// The component's name: `cache`, `apiKey`.
  public let name: String
  /// The unlabelled arguments, in order.
  public let positional: [String]
  /// The labelled arguments, by label.
  public let named: [String: String]
  /// Where the entry was written: the file, and the key (`profiles.layered.books[1]`).
  public let file: String
  /// The key it was written at (`profiles.layered.books[1]`).
  public let key: String
  /// The entry as written.
  public let written: String
  /// The app's variable prefix (`KERNEL`), so a message can name the variable of a key.
  public var variablePrefix = "KERNEL"
  /// The labels the component asked for, so far.
  private let asked = Asked()

  private final class Asked: Sendable {
    let labels = Mutex<Set<String>>([])
  }

  public static func == (lhs: Parameters, rhs: Parameters) -> Bool {
    (lhs.name, lhs.positional, lhs.named, lhs.file, lhs.key, lhs.written)
      == (rhs.name, rhs.positional, rhs.named, rhs.file, rhs.key, rhs.written)
  }

  /// An entry's arguments, as a config entry gives them; `written` defaults to the name.
  public init(
    name: String, positional: [String] = [], named: [String: String] = [:],
    file: String = "the catalog", key: String = "", written: String? = nil
  ) {
    self.name = name
    self.positional = positional
    self.named = named
    self.file = file
    self.key = key
    self.written = written ?? name
  }

  /// Parses `name`, `name(a, b)` or `name(label: value, …)` found at `key` of `file`.
  public static func parse(_ text: String, file: String, key: String) throws -> Parameters {
    let trimmed = text.trimmingSpaces()
    let name = String(trimmed.prefix { $0 != "(" }).trimmingSpaces()
    var positional: [String] = []
    var named: [String: String] = [:]
    if let open = trimmed.firstIndex(of: "("), trimmed.hasSuffix(")") {
      let inside = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
      for piece in inside.split(separator: ",") {
        let argument = piece.trimmingSpaces()
        if let colon = argument.firstIndex(of: ":") {
          let label = argument[..<colon].trimmingSpaces()
          named[label] = argument[argument.index(after: colon)...]
            .trimmingSpaces()
        } else {
          positional.append(argument)
        }
      }
    } else if trimmed.contains("(") || trimmed.contains(")") {
      throw ConfigError.malformed(
        file: file, key: key, value: text, expected: "a name with arguments in parentheses")
    }
    guard !name.isEmpty else {
      throw ConfigError.malformed(
        file: file, key: key, value: text, expected: "a name, with arguments in parentheses")
    }
    return Parameters(
      name: name, positional: positional, named: named, file: file, key: key, written: text)
  }

  /// The argument labelled `label`, else the one at `index`; nil when neither was given.
  public func value(_ label: String, at index: Int? = nil) -> String? {
    asked.labels.withLock { _ = $0.insert(label) }
    if let value = named[label] { return value }
    guard let index, index < positional.count else { return nil }
    return positional[index]
  }

  /// A text argument, or `fallback` when it was not given (an error when there is none).
  public func string(_ label: String, at index: Int? = nil, default fallback: String? = nil)
    throws -> String
  {
    guard let value = value(label, at: index) ?? fallback else {
      throw invalid("written with its \(label): \(name)(\(label): …)")
    }
    return value
  }

  /// A whole number above 0, or `fallback` when it was not given.
  public func positiveInt(_ label: String, at index: Int? = nil, default fallback: Int) throws
    -> Int
  {
    guard let text = value(label, at: index) else { return fallback }
    guard let number = Int(text), number > 0 else {
      throw invalid("a whole number above 0 for \(label)")
    }
    return number
  }

  /// One of `T`'s cases by its raw value (`grant: password`), or `fallback` when it was not
  /// given; another word is an error listing the ones it takes.
  public func oneOf<T: CaseIterable & RawRepresentable<String>>(
    _ label: String, _ type: T.Type, at index: Int? = nil, default fallback: T
  ) throws -> T {
    guard let text = value(label, at: index) else { return fallback }
    guard let chosen = T(rawValue: text) else {
      throw invalid("one of \(T.allCases.map(\.rawValue).joined(separator: ", ")) for \(label)")
    }
    return chosen
  }

  /// Refuses a label the component did not ask for while it read its parameters: a
  /// misspelling (`memory(capacty: 5)`) is an error naming the closest label it takes.
  func refuseLabelsNotAsked() throws {
    let asked = self.asked.labels.withLock { $0 }
    guard let label = named.keys.sorted().first(where: { !asked.contains($0) }) else { return }
    throw ConfigError.unknownLabel(
      file: file, key: key, entry: written, label: label,
      closest: closestName(to: label, in: Array(asked)), valid: asked.sorted())
  }

  /// The variable that sets `key` (`KERNEL_ENVIRONMENTS_LOCAL_CLIENT_SECRET`), for messages.
  public func variable(_ key: [String]) -> String {
    ConfigFlag.variable(key, prefix: variablePrefix)
  }

  /// A config error at this entry: "… but it must be `expected`."
  public func invalid(_ expected: String) -> ConfigError {
    .malformed(file: file, key: key, value: written, expected: expected)
  }
}

extension StringProtocol {
  /// Without the spaces and tabs at either end: what `trimmingCharacters(in: .whitespaces)`
  /// drops (Unicode's space separators, the tab and the zero-width space), without a trip through
  /// NSString.
  func trimmingSpaces() -> String {
    let scalars = unicodeScalars
    let isSpace = { (scalar: Unicode.Scalar) in
      scalar.isASCII
        ? scalar == " " || scalar == "\t"
        : scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    }
    guard let first = scalars.firstIndex(where: { !isSpace($0) }),
      let last = scalars.lastIndex(where: { !isSpace($0) })
    else { return "" }
    return String(String.UnicodeScalarView(scalars[first...last]))
  }
}
