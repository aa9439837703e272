import Foundation

/// What a fixture server answers: a method and a path pattern (`GET /api/books/{id}`) to an
/// answer. Any app's API can be served: routes from closures, or from a folder of JSON files
/// (`folder(_:)`).
///
/// A pattern is a path from the root; a segment in braces matches any one segment and its value
/// is in `SampleRequest.parameters`. A pattern may end in a query (`/api/books?page=2`): it then
/// matches only requests whose query has each of those values (other parameters may come too).
/// When several patterns match, the one with more literal segments and query values wins
/// (`/api/books/7` over `/api/books/{id}`, `/api/books?page=2` over `/api/books`), then the one
/// added last.
///
/// ```swift
/// var routes = FixtureRoutes()
/// routes.add("GET", "/api/books/{id}") { request in
///   .json(["id": Int(request.parameters["id"] ?? "") ?? 0, "title": "Dune"])
/// }
/// let server = try await FixtureServer.start(routes: routes)
/// ```
public struct FixtureRoutes: Sendable {
  /// How a route answers a request.
  public typealias Answer = @Sendable (SampleRequest) async -> SampleResponse

  struct Route: Sendable {
    let method: String
    let segments: [Segment]
    /// The query values the request must have.
    let query: [String: String]
    let pattern: String
    let answer: Answer
    var literals: Int {
      segments.count { if case .literal = $0 { true } else { false } } + query.count
    }
  }

  enum Segment: Sendable, Equatable {
    case literal(String)
    case parameter(String)
  }

  private var routes: [Route] = []

  /// What these routes did, said when a server of them stops (`kernel serve`'s last line:
  /// `12 ratings applied`), read then; nil for nothing.
  public var summary: @Sendable () -> String? = { nil }

  /// No routes: every request is a 404 until some are added.
  public init() {}

  /// The patterns served, as `GET /api/books/{id}`, sorted.
  public var patterns: [String] { routes.map { "\($0.method) \($0.pattern)" }.sorted() }

  /// Answers `method pattern` with `answer`, replacing a route of the same method and pattern.
  public mutating func add(_ method: String, _ pattern: String, _ answer: @escaping Answer) {
    let method = method.uppercased()
    let parsed = SampleRequest(path: pattern)
    let segments = Self.segments(parsed.path)
    routes.removeAll { $0.method == method && $0.segments == segments && $0.query == parsed.query }
    routes.append(
      Route(
        method: method, segments: segments, query: parsed.query, pattern: pattern, answer: answer))
  }

  /// Adds every route of `other`; its routes win over equal ones here.
  public mutating func add(_ other: FixtureRoutes) {
    for route in other.routes { add(route.method, route.pattern, route.answer) }
  }

  /// What a request finds.
  enum Match {
    case found(Answer, parameters: [String: String])
    /// The path exists for other methods only.
    case wrongMethod(allowed: [String])
    case none
  }

  func match(_ method: String, _ path: String, query: [String: String] = [:]) -> Match {
    let parts = Self.parts(path)
    var best: (route: Route, parameters: [String: String])?
    var methods: Set<String> = []
    for route in routes.reversed() {
      guard let parameters = Self.bind(route.segments, to: parts),
        route.query.allSatisfy({ query[$0.key] == $0.value })
      else { continue }
      guard route.method == method else {
        methods.insert(route.method)
        continue
      }
      if best == nil || route.literals > (best?.route.literals ?? 0) {
        best = (route, parameters)
      }
    }
    if let best { return .found(best.route.answer, parameters: best.parameters) }
    // HEAD is GET without the body (RFC 9110 §9.3.2): the server leaves the body out.
    if method == "HEAD", methods.contains("GET") { return match("GET", path, query: query) }
    return methods.isEmpty ? .none : .wrongMethod(allowed: methods.sorted())
  }

  private static func bind(_ segments: [Segment], to parts: [Substring]) -> [String: String]? {
    guard segments.count == parts.count else { return nil }
    var parameters: [String: String] = [:]
    for (segment, part) in zip(segments, parts) {
      switch segment {
      case .literal(let text): guard text == part else { return nil }
      case .parameter(let name): parameters[name] = String(part)
      }
    }
    return parameters
  }

  private static func parts(_ path: String) -> [Substring] {
    path.split(separator: "/", omittingEmptySubsequences: true)
  }

  private static func segments(_ pattern: String) -> [Segment] {
    parts(pattern).map { part in
      part.count > 2 && part.first == "{" && part.last == "}"
        ? .parameter(String(part.dropFirst().dropLast())) : .literal(String(part))
    }
  }
}
