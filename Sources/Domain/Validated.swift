/// A value as its source answered it, with the validators that came beside it (an api's
/// `ETag` and `Last-Modified`). The source under a stack of layers returns one for each call,
/// so a caching layer keeps the validators with the value and offers them back on the next
/// request for it: by value, up and down, never through a box. Api's `Response` is one.
public protocol Validated<Value>: Sendable {
  /// What the answer holds.
  associatedtype Value: Sendable
  /// The answer's value.
  var value: Value { get }
  /// The validators it came with, which a cache keeps and offers back.
  var validators: CacheValidators { get }
}

/// A value that came with no validators: what a source that is no api answers (a fake, a
/// file, a computation). A caching layer stores it, and has nothing to offer back.
public struct WithoutValidators<Value: Sendable>: Validated {
  /// The value.
  public let value: Value
  /// None.
  public var validators: CacheValidators { CacheValidators() }

  /// `value`, with no validators.
  public init(_ value: Value) { self.value = value }
}
