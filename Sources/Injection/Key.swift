/// What a registration is found by: the type it serves, the types of the runtime arguments its
/// factory takes (as one tuple type, `()` for none) and an optional tag.
///
/// Equality and hashing use the metatypes' identities only: no strings are built on a lookup.
@usableFromInline
struct Key: Hashable, Sendable, CustomStringConvertible {
  @usableFromInline let type: any Any.Type
  @usableFromInline let arguments: any Any.Type
  @usableFromInline let tag: Tag?

  @inlinable
  init(_ type: any Any.Type, arguments: any Any.Type = Void.self, tag: Tag? = nil) {
    self.type = type
    self.arguments = arguments
    self.tag = tag
  }

  @inlinable
  static func == (lhs: Key, rhs: Key) -> Bool {
    ObjectIdentifier(lhs.type) == ObjectIdentifier(rhs.type)
      && ObjectIdentifier(lhs.arguments) == ObjectIdentifier(rhs.arguments) && lhs.tag == rhs.tag
  }

  @usableFromInline
  func hash(into hasher: inout Hasher) {
    hasher.combine(ObjectIdentifier(type))
    hasher.combine(ObjectIdentifier(arguments))
    if let tag { hasher.combine(tag) }
  }

  /// Whether `other` is the same type and tag, whatever arguments it takes.
  func sameService(as other: Key) -> Bool {
    ObjectIdentifier(type) == ObjectIdentifier(other.type) && tag == other.tag
  }

  var typeName: String { Self.readable(String(describing: type)) }

  /// A constrained existential as a person writes it: Swift prints `any Clock<Duration>` as
  /// `any Clock<Self.Clock.Duration == Duration>`; this gives `Clock<Duration>`.
  static func readable(_ name: String) -> String {
    guard name.hasPrefix("any "), let open = name.firstIndex(of: "<"), name.hasSuffix(">")
    else { return name }
    let base = name[name.index(name.startIndex, offsetBy: 4)..<open]
    let constraints = name[name.index(after: open)..<name.index(before: name.endIndex)]
    let values = constraints.split(separator: ",").map { constraint in
      String(constraint.split(separator: "=").last?.drop { $0 == " " } ?? constraint)
    }
    return "\(base)<\(values.joined(separator: ", "))>"
  }

  /// The argument list as a person writes it: `()`, `(Int)`, `(Int, String)`.
  var signature: String {
    let name = String(describing: arguments)
    return name.hasPrefix("(") ? name : "(\(name))"
  }

  @usableFromInline
  var description: String {
    var text = typeName
    if let tag { text += " tagged \(tag)" }
    if ObjectIdentifier(arguments) != ObjectIdentifier(Void.self) {
      text += " with arguments \(signature)"
    }
    return text
  }
}

/// Names one of several registrations of the same type ("primary", 2, or any string- or
/// integer-backed enum case), so a container can hold a `Database` per role.
public struct Tag: Hashable, Sendable, CustomStringConvertible {
  @usableFromInline
  enum Value: Hashable, Sendable {
    case string(String)
    case int(Int)
  }

  @usableFromInline
  let value: Value

  /// A tag named by a string.
  @inlinable
  public init(_ name: String) { value = .string(name) }

  /// A tag named by an integer.
  public init(_ number: Int) { value = .int(number) }

  /// A tag named by an enum case or any other string-backed value.
  public init<R: RawRepresentable>(_ raw: R) where R.RawValue == String {
    value = .string(raw.rawValue)
  }

  /// A tag named by an enum case or any other integer-backed value.
  public init<R: RawRepresentable>(_ raw: R) where R.RawValue == Int { value = .int(raw.rawValue) }

  public var description: String {
    switch value {
    case .string(let name): "\"\(name)\""
    case .int(let number): "\(number)"
    }
  }
}

extension Tag: ExpressibleByStringLiteral {
  public init(stringLiteral name: String) { self.init(name) }
}

extension Tag: ExpressibleByIntegerLiteral {
  public init(integerLiteral number: Int) { self.init(number) }
}
