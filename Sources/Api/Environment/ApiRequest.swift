import Domain
import Foundation
import HTTPTypes

/// A route and what its answer becomes: the value a service asks the client for. In the spirit
/// of Get's `Request<Response>`: the request knows its response type, so a service is a list
/// of request values and nothing else.
///
/// ```swift
/// extension ApiRequest where Response == Book {
///   static func book(id: Int) -> Self {
///     ApiRequest(.get("books/\(id)"), mapping: .init(keyPath: "data"))
///   }
/// }
/// let book = try await client.send(.book(id: 7))
/// ```
public struct ApiRequest<Response>: Sendable, CustomStringConvertible {
  /// What is sent.
  public var route: Route
  /// Turns a validated (2xx) body into the response; errors name the route.
  public var decode: @Sendable (Data, Route) throws -> Response
  /// Reads the body of an answer the route does not accept: what it says went wrong, and the
  /// app's own error value when the request names one (see `HTTPFailure`). Nil: the message at
  /// `JSONMapping.body`'s message key paths, else an excerpt.
  public var readFailure: (@Sendable (Data) -> (message: String?, decoded: (any Sendable)?))?

  /// A request for `route` whose body `decode` reads.
  public init(
    _ route: Route, decode: @escaping @Sendable (Data, Route) throws -> Response,
    readFailure: (@Sendable (Data) -> (message: String?, decoded: (any Sendable)?))? = nil
  ) {
    self.route = route
    self.decode = decode
    self.readFailure = readFailure
  }

  public var description: String { route.description }

  /// The same request, its decoded response turned into another value by `transform` (the
  /// api's wire type into the app's own).
  public func map<Other>(_ transform: @escaping @Sendable (Response) throws -> Other)
    -> ApiRequest<Other>
  {
    let decode = decode
    return ApiRequest<Other>(
      route, decode: { data, route in try transform(try decode(data, route)) },
      readFailure: readFailure)
  }
}

extension ApiRequest where Response: Decodable & Sendable {
  /// JSON at `mapping`'s key path, inside an envelope or not; a refused answer's message is
  /// read at the mapping's message key paths.
  public init(_ route: Route, mapping: JSONMapping = .body) {
    self.init(
      route, decode: { data, route in try mapping.decode(Response.self, from: data, route: route) },
      readFailure: { body in (mapping.message(in: body), nil) })
  }

  /// JSON as `mapping` says; a refused answer's body is decoded as `errorBody` (the whole body,
  /// with the mapping's strategies), kept in the `HTTPFailure`, and its description, when it
  /// has one, is the failure's message.
  ///
  /// ```swift
  /// struct Problem: Decodable, Sendable, CustomStringConvertible {
  ///   struct Detail: Decodable, Sendable { let message: String }
  ///   let error: Detail
  ///   var description: String { error.message }
  /// }
  /// ApiRequest<Book>(.get("books/9"), mapping: mapping, errorBody: Problem.self)
  /// ```
  public init<ErrorBody: Decodable & Sendable>(
    _ route: Route, mapping: JSONMapping = .body, errorBody: ErrorBody.Type
  ) {
    self.init(
      route, decode: { data, route in try mapping.decode(Response.self, from: data, route: route) },
      readFailure: { body in
        guard let decoded = try? mapping.decoder().decode(ErrorBody.self, from: body) else {
          return (mapping.message(in: body), nil)
        }
        let message = (decoded as? any CustomStringConvertible)?.description
        return (message ?? mapping.message(in: body), decoded)
      })
  }
}

extension ApiRequest where Response == Data {
  /// The body as it came.
  public static func data(_ route: Route) -> Self { ApiRequest(route, decode: { data, _ in data }) }
}

extension ApiRequest where Response == String {
  /// The most bytes a token may have: real ones are a few hundred (a JWT a few KB).
  public static var maximumTokenBytes: Int { 8 << 10 }

  /// A token: the plain-text body, trimmed, or the string at `mapping`'s key path. Refused, so
  /// that nothing is saved: an empty one, one with spaces or control characters, and one over
  /// `maximumTokenBytes` (the body itself is refused past four times that, before decoding).
  public static func token(_ route: Route = .auth, mapping: JSONMapping? = nil) -> Self {
    ApiRequest(
      route,
      decode: { data, route in
        guard data.count <= 4 * maximumTokenBytes else {
          throw ApiError.decoding(
            route: route, field: "",
            reason:
              "the answer is \(data.count) bytes, too large to hold a token (at most \(maximumTokenBytes))"
          )
        }
        let token: String
        if let mapping {
          token = try mapping.decode(String.self, from: data, route: route)
        } else {
          guard let text = String(data: data, encoding: .utf8) else {
            throw ApiError.decoding(route: route, field: "", reason: "the token is not UTF-8 text")
          }
          token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return try checkedToken(token, route: route)
      })
  }

  /// `token` if it may be kept and sent: not empty, without spaces or control characters, at
  /// most `maximumTokenBytes` (one over it would fail every later request that carries it).
  /// Every token Kernel keeps (the plain token, OAuth 2.0's access and refresh tokens) passes
  /// here; `field` names where it was read (`access_token`).
  public static func checkedToken(_ token: String, route: Route, field: String = "") throws
    -> String
  {
    guard !token.isEmpty, !token.contains(where: { $0.isWhitespace || $0.isNewline }) else {
      throw ApiError.decoding(
        route: route, field: field, reason: "the token is empty or contains spaces")
    }
    guard !token.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
    else {
      throw ApiError.decoding(
        route: route, field: field, reason: "the token contains control characters")
    }
    guard token.utf8.count <= maximumTokenBytes else {
      throw ApiError.decoding(
        route: route, field: field,
        reason:
          "the token is \(token.utf8.count) bytes, more than the \(maximumTokenBytes) a token may have"
      )
    }
    return token
  }
}

/// What a call learned, as a value: the decoded value with the status, header fields, body and
/// validators of the answer it came from (Get's `Response<T>`), so what lies beside the value
/// (`meta.next_page`, a `Link` header) can be read too.
public struct Response<Value: Sendable>: Sendable {
  /// The decoded value.
  public var value: Value
  /// The answer's status.
  public var status: Int
  /// The answer's header fields.
  public var headerFields: HTTPFields
  /// The whole body the value was decoded from.
  public var body: Data

  /// A response of these values.
  public init(value: Value, status: Int, headerFields: HTTPFields = [:], body: Data = Data()) {
    self.value = value
    self.status = status
    self.headerFields = headerFields
    self.body = body
  }

  /// The JSON value at `keyPath` in the body (`"meta.next_page"`), nil when there is none.
  public func field(_ keyPath: String) -> JSONValue? {
    guard let json = try? JSONDecoder().decode(JSONValue.self, from: body) else { return nil }
    return json[keyPath.split(separator: ".").map(String.init)]
  }

  /// The targets of the `Link` header (RFC 8288) by relation: `links["next"]`.
  public var links: [String: String] { Link.targets(in: headerFields) }

  /// Its `ETag` and `Last-Modified`.
  public var validators: CacheValidators { CacheValidators(headerFields) }
}

extension Response {
  /// The same answer with its value changed by `transform` (an api type made a domain type).
  public func map<Other: Sendable>(_ transform: (Value) throws -> Other) rethrows -> Response<Other>
  {
    Response<Other>(
      value: try transform(value), status: status, headerFields: headerFields, body: body)
  }
}

extension CacheValidators {
  /// The `ETag` and `Last-Modified` of an answer's header fields.
  public init(_ headerFields: HTTPFields) {
    self.init(etag: headerFields[.eTag], lastModified: headerFields[.lastModified])
  }
}
