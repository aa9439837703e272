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
