import Domain
import Foundation
import HTTPTypes

/// How the page after an answer is found, so a paginated list can be walked to its end
/// (`ApiClient.pages(_:paging:)`): by the `Link` header's `rel="next"` (RFC 8288), or by a field
/// of the body (`meta.next_page`), or by an app's own rule.
///
/// ```swift
/// for try await page in client.pages(.issues, paging: .field("meta.next_page", query: "page")) {
///   print(page.value.count)
/// }
/// let all = try await client.all(.issues, paging: .link)
/// ```
public struct Paging: Sendable {
  /// The route of the page after `response` to `route`, or nil when it was the last.
  public let next:
    @Sendable (_ route: Route, _ response: ApiResponse, _ environment: ApiEnvironment) throws ->
      Route?

  /// Pages found by `next`.
  public init(
    next: @escaping @Sendable (Route, ApiResponse, ApiEnvironment) throws -> Route?
  ) {
    self.next = next
  }

  /// The `Link` header's `rel="next"` target, resolved against the request's URL; it must stay
  /// below the environment's base URL. No such link: the last page.
  public static let link = Paging { route, response, environment in
    guard let target = Link.targets(in: response.headerFields)["next"] else { return nil }
    return try Route.following(target, from: route, in: environment)
  }

  /// A field of the body at `keyPath`: a number or a token is the `parameter` query value of the
  /// same route (`?page=2`, `?cursor=abc`); a URL or an absolute path is followed like a link.
  /// Missing, null, false or an empty string: the last page. Anything else (an object, a list,
  /// true) is the api's bad data naming the field, never a list cut short unsaid.
  public static func field(_ keyPath: String, query parameter: String) -> Paging {
    let path = keyPath.split(separator: ".").map(String.init)
    return Paging { route, response, environment in
      guard let body = try? JSONDecoder().decode(JSONValue.self, from: response.body) else {
        return nil
      }
      let value: String
      switch body[path] {
      case .integer(let number): value = String(number)
      case .number(let number): value = String(number)
      case .string(let text) where !text.isEmpty: value = text
      case nil, .null, .boolean(false), .string: return nil
      case .boolean, .object, .array:
        throw ApiError.decoding(
          route: route, field: keyPath,
          reason: "expected the next page (a number, a token or an address), or none")
      }
      if value.hasPrefix("/") || value.hasPrefix("http://") || value.hasPrefix("https://") {
        return try Route.following(value, from: route, in: environment)
      }
      var next = route
      next.query.removeAll { $0.name == parameter }
      next.query.append(URLQueryItem(name: parameter, value: value))
      return next
    }
  }
}

extension Route {
  /// A GET of `reference` (a URL, or a path, as a `Link` header or a body gives it) resolved
  /// against `route`'s URL, as a route below `environment`'s base URL; a target elsewhere is
  /// refused.
  static func following(_ reference: String, from route: Route, in environment: ApiEnvironment)
    throws -> Route
  {
    let base = environment.baseURL
    let basePath = base.path.hasSuffix("/") ? base.path : base.path + "/"
    guard let url = URL(string: reference, relativeTo: route.url(in: environment))?.absoluteURL,
      let parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
      url.scheme == base.scheme, url.host == base.host, url.port == base.port,
      parts.path.hasPrefix(basePath)
    else {
      throw ApiError.invalidRoute(
        route: route,
        reason:
          "the next page's address \(Redaction.url(reference)) is not below the environment's"
          + " base URL \(Redaction.url(base.absoluteString))")
    }
    return Route(
      .get, String(parts.path.dropFirst(basePath.count)), query: parts.queryItems ?? [],
      headerFields: route.headerFields)
  }
}

/// `Link` header values (RFC 8288): `<https://api.example/issues?page=2>; rel="next"`.
enum Link {
  /// Each link's target by its relation types; the first link of a relation wins.
  static func targets(in fields: HTTPFields) -> [String: String] {
    var targets: [String: String] = [:]
    for value in fields[values: .link] {
      var rest = Substring(value)
      while let open = rest.firstIndex(of: "<"),
        let close = rest[open...].firstIndex(of: ">")
      {
        let target = String(rest[rest.index(after: open)..<close])
        let paramsEnd = rest[close...].firstIndex(of: "<") ?? rest.endIndex
        for parameter in rest[rest.index(after: close)..<paramsEnd].split(separator: ";") {
          let pair = parameter.split(separator: "=", maxSplits: 1)
          guard pair.count == 2,
            String(pair[0]).trimmingCharacters(in: .whitespaces).lowercased() == "rel"
          else { continue }
          let relations = String(pair[1]).trimmingCharacters(
            in: CharacterSet(charactersIn: " \t\",;"))
          for relation in relations.split(separator: " ")
          where targets[relation.lowercased()] == nil {
            targets[relation.lowercased()] = target
          }
        }
        rest = rest[paramsEnd...]
      }
    }
    return targets
  }
}

/// The pages of a request, first to last (`ApiClient.pages(_:paging:)`). Walking stops at the
/// page whose paging finds no next one; a next page that was already fetched (a loop), or more
/// than `limit` pages, is an error.
public struct Pages<Value: Sendable>: AsyncSequence, Sendable {
  public typealias Element = Response<Value>
  let client: ApiClient
  let request: ApiRequest<Value>
  let paging: Paging
  let limit: Int

  public func makeAsyncIterator() -> Iterator {
    Iterator(pages: self, route: request.route)
  }

  /// Fetches one page at a time, stopping at a route seen before.
  public struct Iterator: AsyncIteratorProtocol {
    let pages: Pages
    var route: Route?
    var seen: Set<Route> = []

    init(pages: Pages, route: Route) {
      self.pages = pages
      self.route = route
    }

    public mutating func next() async throws -> Response<Value>? {
      guard let current = route else { return nil }
      route = nil
      guard seen.count < pages.limit else {
        throw ApiError.invalidRoute(
          route: current, reason: "the list runs past \(pages.limit) pages, more than are walked")
      }
      seen.insert(current)
      var request = pages.request
      request.route = current
      let response = try await pages.client.response(request)
      let next = try pages.paging.next(
        current,
        ApiResponse(
          HTTPResponse(status: .init(code: response.status), headerFields: response.headerFields),
          body: response.body),
        pages.client.context.environment)
      if let next, seen.contains(next) {
        throw ApiError.invalidRoute(
          route: current, reason: "its next page, \(next), was already fetched: the pages loop")
      }
      route = next
      return response
    }
  }
}

extension ApiClient {
  /// The pages of `request`, each found by `paging` from the one before, at most `limit`.
  public func pages<Value: Sendable>(
    _ request: ApiRequest<Value>, paging: Paging, limit: Int = 1_000
  ) -> Pages<Value> {
    Pages(client: self, request: request, paging: paging, limit: limit)
  }

  /// Every element of every page of `request`, in order.
  public func all<Element: Sendable>(
    _ request: ApiRequest<[Element]>, paging: Paging, limit: Int = 1_000
  ) async throws -> [Element] {
    var elements: [Element] = []
    for try await page in pages(request, paging: paging, limit: limit) {
      elements += page.value
    }
    return elements
  }
}

extension ApiClient {
  /// `route` and every page after it that `paging` finds, as one response: the last page's
  /// status and header fields (no validators: they were one page's), and its JSON body with the
  /// array at `items` (a dotted key path; empty for a body that is the array) holding every
  /// page's elements, in order. What a generated client's list operation is answered with
  /// (`KernelTransport(_:paging:)`), so it reads one page of everything instead of following
  /// cursors itself. Each page is decoded once.
  public func response(
    for route: Route, paging: Paging, items: String, limit: Int = 1_000
  ) async throws -> ApiResponse {
    let path = items.split(separator: ".").map(String.init)
    var next: Route? = route
    var seen = Set<Route>()
    var elements: [JSONValue] = []
    var last: (response: ApiResponse, body: JSONValue)?
    while let current = next, seen.count < limit, seen.insert(current).inserted {
      let page = try await response(for: current)
      let body = try? JSONDecoder().decode(JSONValue.self, from: page.body)
      guard case .array(let found)? = body?[path], let body else {
        throw ApiError.decoding(
          route: current, field: items.isEmpty ? "(the body)" : items,
          reason: "page \(seen.count) has no list there to gather the pages' items into")
      }
      elements += found
      last = (page, body)
      next = try paging.next(current, page, context.environment)
    }
    guard let (lastPage, lastBody) = last else { return try await response(for: route) }
    let all = JSONValue.array(elements)
    // The last page's envelope with the list at `items` replaced (a merge patch replaces an
    // array whole and leaves the other fields as they are).
    let patch = path.reversed().reduce(all) { inner, key in .object([key: inner]) }
    var gathered = lastPage
    gathered.body = try JSONEncoder().encode(
      path.isEmpty ? all : lastBody.applying(mergePatch: patch))
    // Its length is the gathered body's; its validators were the last page's alone.
    for name in [HTTPField.Name.contentLength, .eTag, .lastModified] {
      gathered.head.headerFields[name] = nil
    }
    return gathered
  }
}

extension HTTPField.Name {
  /// `Link` (RFC 8288). A constant valid name, never nil.
  static let link = HTTPField.Name("Link")!
}
