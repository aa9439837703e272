import Foundation

/// A call's answer, as the layers pass it up and the runner (`ServiceStack.answer`) gives it:
/// the value with where it came from, how old it is, the validators it came with and, when the
/// api answered it now, the status and header fields it answered with — a value, never a side
/// channel.
public struct Answer<Value: Sendable>: Sendable {
  /// The value.
  public var value: Value
  /// Where it came from.
  public var origin: ResultOrigin
  /// Seconds since the value was fetched from the network.
  public var age: TimeInterval
  /// The `ETag` and `Last-Modified` it came with, offered back on the next conditional request.
  public var validators: CacheValidators
  /// The HTTP status the api answered with, when it answered this call now (origin `network`);
  /// nil for an answer from the store, which keeps the value and its validators, not the rest.
  public var status: Int?
  /// The header fields the api answered with (origin `network`), by lower-cased name, the
  /// values of a repeated field joined by `, `: `headers["x-ratelimit-remaining"]`. Empty for
  /// an answer from the store.
  public var headers: [String: String] = [:]
  /// A local query's answer (origin `local`) over every entity of its type there is: the store
  /// holds all the api had when a complete list of the whole type last answered (`age` is
  /// that list's), so nothing is missing but what changed since.
  public var isComplete = false
  /// How long the answer took, as its runner measured it (a command front's `answered`: every
  /// call of the command's work); nil when it was not measured.
  public var elapsed: Duration?

  /// An answer of `value` from `origin`, `age` seconds old, with its validators, and the status
  /// and header fields the api answered with (none for an answer from the store).
  public init(
    value: Value, origin: ResultOrigin, age: TimeInterval = 0,
    validators: CacheValidators = CacheValidators(), status: Int? = nil,
    headers: [String: String] = [:]
  ) {
    self.value = value
    self.origin = origin
    self.age = age
    self.validators = validators
    self.status = status
    self.headers = headers
  }

  /// The same answer with its value transformed (a movie as a list of one), from where it came.
  public func map<T: Sendable>(_ transform: (Value) throws -> T) rethrows -> Answer<T> {
    var answer = Answer<T>(
      value: try transform(value), origin: origin, age: age, validators: validators,
      status: status, headers: headers)
    answer.isComplete = isComplete
    answer.elapsed = elapsed
    return answer
  }

  /// The answers of several calls as one, in their order: of their one origin, or `mixed`; as
  /// old as the oldest stored copy among them (new when all came from the api).
  public static func gathered<Element>(_ answers: [Answer<Element>]) -> Answer<[Element]>
  where Value == [Element] {
    let origins = Set(answers.map(\.origin))
    return Answer(
      value: answers.map(\.value),
      origin: origins.count > 1 ? .mixed : origins.first ?? .network,
      age: answers.filter { $0.origin != .network }.map(\.age).max() ?? 0)
  }
}

extension Answer: Equatable where Value: Equatable {}

/// Where a result came from.
public enum ResultOrigin: String, Sendable, Hashable {
  /// From the api (`network`), or a stored copy (`cache`).
  case network, cache
  /// A cached copy changed by writes the api has not taken yet.
  case pending
  /// Answered by a local query over stored entities, for a call never stored: the api may
  /// know more.
  case local
  /// Gathered from answers of more than one origin (the api's and stored copies).
  case mixed
}

/// What makes a request conditional: the validators of a stored copy, offered to the one
/// request that would replace it (`If-None-Match`, `If-Modified-Since`).
public struct CacheValidators: Sendable, Hashable, Codable {
  /// The `ETag` the answer came with, sent back as `If-None-Match`.
  public var etag: String?
  /// The `Last-Modified` the answer came with, sent back as `If-Modified-Since`.
  public var lastModified: String?

  /// Validators as an answer's headers gave them; none by default.
  public init(etag: String? = nil, lastModified: String? = nil) {
    self.etag = etag
    self.lastModified = lastModified
  }

  /// Whether it holds neither validator: nothing to make a request conditional with.
  public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// The stored copy is still current (HTTP 304): serve it and refresh its age.
package struct NotModified: Error, Sendable {
  /// The answer "not modified" (304).
  public init() {}
}
