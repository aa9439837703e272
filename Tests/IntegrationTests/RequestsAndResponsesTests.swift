import Api
import Composition
import Domain
import Foundation
import HTTPTypes
import KernelTesting
import Layers
import SampleApi
import Store
import Synchronization
import Testing

/// An issue tracker's api as modern apis shape it, over real loopback HTTP: a `{data, meta}`
/// envelope, snake_case keys, ISO 8601 timestamps with milliseconds, pages by `meta.next_page`
/// or by `Link`, JSON error bodies; decoded by mappings, with no decoding code of the app's.
@Suite(.timeLimit(.minutes(1))) struct RequestsAndResponsesTests {
  struct Ticket: Codable, Sendable, Equatable {
    let id: Int
    let title: String
    let createdAt: Date
  }

  /// The tracker's mapping: the value under `data`, snake_case keys, ISO 8601 dates.
  static let mapping = JSONMapping(keyPath: "data", keys: .snakeCase)

  /// `{"data": [tickets], "meta": {"next_page": …}}` for `page` of three, two tickets each.
  static func page(_ page: Int, link: String? = nil) -> SampleResponse {
    let tickets = (1...2).map { index in
      let id = (page - 1) * 2 + index
      return #"{"id": \#(id), "title": "T\#(id)", "created_at": "2026-11-25T10:00:0\#(id).123Z"}"#
    }
    let next = page < 3 ? String(page + 1) : "null"
    var response = SampleResponse.staticFile(
      Data(#"{"data": [\#(tickets.joined(separator: ","))], "meta": {"next_page": \#(next)}}"#.utf8)
    )
    if let link, page < 3 { response.headers["Link"] = link }
    return response
  }

  private func client(_ server: FixtureServer) throws -> ApiClient { try .loopback(server) }

  @Test func anEnvelopeWithMetaAndTimestampsWithMillisecondsDecodesByMappingAlone() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/tickets") { _ in Self.page(1) }
    let response = try await client(server).response(
      ApiRequest<[Ticket]>(.get("tickets"), mapping: Self.mapping))
    #expect(response.value.map(\.title) == ["T1", "T2"])
    #expect(
      JSONMapping.iso8601String(try #require(response.value.first?.createdAt))
        == "2026-11-25T10:00:01.123Z")
    #expect(response.field("meta.next_page") == .integer(2))
    // The same date written with an offset and without fractional seconds, and other strategies.
    let dates: [(String, JSONMapping.DateStrategy, String)] = [
      (#""2026-11-25T11:00:01+01:00""#, .iso8601, "2026-11-25T10:00:01.000Z"),
      (#""2026-11-25""#, .day, "2026-11-25T00:00:00.000Z"),
      ("1764064801.5", .secondsSince1970, "2025-11-25T10:00:01.500Z"),
      ("1764064801500", .millisecondsSince1970, "2025-11-25T10:00:01.500Z"),
      (#""25/11/2026 10:00""#, .pattern("dd/MM/yyyy HH:mm"), "2026-11-25T10:00:00.000Z"),
    ]
    for (text, strategy, expected) in dates {
      let mapping = JSONMapping(keyPath: "at", dates: strategy)
      let date = try mapping.decode(
        Date.self, from: Data(#"{"at": \#(text)}"#.utf8), route: .get("x"))
      #expect(JSONMapping.iso8601String(date) == expected, "\(strategy)")
      let written = try mapping.encoder().encode(["at": date])
      #expect(try mapping.decode(Date.self, from: written, route: .get("x")) == date)
    }
  }

  @Test func aPaginatedListIsWalkedToItsEndThroughMetaNextPage() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    let asked = Mutex<[String]>([])
    server.handle("GET", "/api/tickets") { request in
      asked.withLock { $0.append(request.query["page"] ?? "-") }
      return Self.page(Int(request.query["page"] ?? "1") ?? 1)
    }
    let tickets = try await client(server).all(
      ApiRequest<[Ticket]>(
        .get("tickets", query: [.init(name: "state", value: "open")]),
        mapping: Self.mapping),
      paging: .field("meta.next_page", query: "page"))
    #expect(tickets.map(\.id) == [1, 2, 3, 4, 5, 6])
    #expect(asked.withLock { $0 } == ["-", "2", "3"])

    // A next page that is no page (an object) is bad data naming the field, not the last page.
    server.handle("GET", "/api/tickets") { _ in
      .staticFile(Data(#"{"data": [], "meta": {"next_page": {"page": 2}}}"#.utf8))
    }
    let error = await #expect(throws: ApiError.self) {
      try await client(server).all(
        ApiRequest<[Ticket]>(.get("tickets"), mapping: Self.mapping),
        paging: .field("meta.next_page", query: "page"))
    }
    #expect(
      error.map { "\($0)" }
        == "GET tickets answered data that does not fit at meta.next_page: expected the next page"
        + " (a number, a token or an address), or none.")
  }

  @Test func aPaginatedListIsWalkedToItsEndThroughLinkHeaders() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    let base = server.baseURL.absoluteString
    // Page 1 links absolutely, page 2 by a path; page 3 has no next link.
    server.handle("GET", "/api/tickets") { _ in
      Self.page(
        1, link: #"<\#(base)tickets?page=2>; rel="next", <\#(base)tickets?page=3>; rel="last""#)
    }
    server.handle("GET", "/api/tickets?page=2") { _ in
      Self.page(2, link: #"</api/tickets?page=3>; rel="next""#)
    }
    server.handle("GET", "/api/tickets?page=3") { _ in Self.page(3) }
    let client = try client(server)
    var pages: [[Int]] = []
    for try await page in client.pages(
      ApiRequest<[Ticket]>(.get("tickets"), mapping: Self.mapping), paging: .link)
    {
      pages.append(page.value.map(\.id))
    }
    #expect(pages == [[1, 2], [3, 4], [5, 6]])

    // A next link that leaves the environment is refused, and nothing is sent to it.
    server.handle("GET", "/api/tickets?page=2") { _ in
      Self.page(2, link: #"<http://127.0.0.2:9/api/tickets?page=3>; rel="next""#)
    }
    let error = await #expect(throws: ApiError.self) {
      try await client.all(
        ApiRequest<[Ticket]>(.get("tickets"), mapping: Self.mapping), paging: .link)
    }
    #expect(
      "\(error.map(String.init(describing:)) ?? "")".contains(
        "is not below the environment's base URL"))
  }

  /// `{"error": {"message": …}}`, as an app would decode it.
  struct Problem: Decodable, Sendable, CustomStringConvertible {
    struct Detail: Decodable, Sendable {
      let message: String
      let code: String
    }
    let error: Detail
    var description: String { "\(error.message) [\(error.code)]" }
  }

  @Test func notFoundAndServerErrorsGiveTheServersMessage() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/tickets/{id}") { request in
      let status = request.parameters["id"] == "9" ? 404 : 500
      let message = status == 404 ? "no ticket 9" : "the database is down"
      return SampleResponse(
        status: status, headers: ["Content-Type": "application/json", "X-Request-Id": "r1"],
        body: Data(#"{"error": {"message": "\#(message)", "code": "E\#(status)"}}"#.utf8))
    }
    let client = try client(server)
    let missing = await #expect(throws: ApiError.self) {
      try await client.send(ApiRequest<Ticket>(.get("tickets/9"), mapping: Self.mapping))
    }
    guard case .status(let notFound) = missing else {
      Issue.record("expected a status failure, got \(String(describing: missing))")
      return
    }
    #expect(notFound.status == 404 && notFound.kind == .notFound)
    #expect(notFound.description == "GET tickets/9 was not found (HTTP 404): no ticket 9.")
    #expect(notFound.headerFields[HTTPField.Name("X-Request-Id")!] == "r1")

    let failing = await #expect(throws: ApiError.self) {
      try await client.send(
        ApiRequest<Ticket>(.get("tickets/1"), mapping: Self.mapping, errorBody: Problem.self))
    }
    guard case .status(let serverError) = failing else {
      Issue.record("expected a status failure, got \(String(describing: failing))")
      return
    }
    #expect(serverError.kind == .unavailable)
    #expect(serverError.decoded(as: Problem.self)?.error.code == "E500")
    #expect(
      serverError.description
        == "GET tickets/1 failed at the api (HTTP 500): the database is down [E500]; try again later."
    )
  }

  @Test func statusAndContentTypeAreValidatedAsEachRequestSays() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/tickets/1") { _ in Self.page(1) }  // JSON sent as text/html
    server.handle("GET", "/api/tickets/2") { _ in
      SampleResponse(
        status: 404, headers: ["Content-Type": "application/problem+json"],
        body: Data(#"{"title": "gone"}"#.utf8))
    }
    let client = try client(server)
    // Any content type by default; only the listed ones when the route names some.
    _ = try await client.response(for: .get("tickets/1"))
    var strict = Route.get("tickets/1")
    strict.acceptableContentTypes = ["application/json"]
    let refused = await #expect(throws: ApiError.self) { try await client.response(for: strict) }
    #expect(refused?.failure == .badData)
    #expect(
      refused?.description
        == "GET tickets/1 answered text/html; charset=utf-8, not application/json as it accepts.")
    strict.acceptableContentTypes = ["application/json", "text/*"]
    _ = try await client.response(for: strict)
    // A route that accepts a 404 reads its body as its value.
    var lenient = Route.get("tickets/2")
    lenient.acceptableStatus = 200..<500
    let problem = try await client.response(ApiRequest<[String: String]>(lenient))
    #expect(problem.status == 404 && problem.value == ["title": "gone"])
  }

  struct NewTicket: Encodable {
    let title: String
    let dueAt: Date
  }

  /// The `Api` catalog's sample, run against a tracker served on loopback.
  @Test func theReadmeSampleReadsWritesAndWalksPages() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/tickets") { request in
      Self.page(Int(request.query["page"] ?? "1") ?? 1)
    }
    server.handle("POST", "/api/tickets") { request in
      let sent = String(decoding: request.body, as: UTF8.self)
      let ok = sent == #"{"due_at":"2025-12-01T09:00:00.000Z","title":"Crash"}"#
      return .staticFile(
        Data(
          #"{"data": {"id": 7, "title": "Crash", "created_at": "2026-11-25T10:00:07.123Z"}}"#.utf8),
        status: ok ? 201 : 400)
    }
    server.handle("GET", "/api/tickets/{id}") { _ in
      .error(404, "no ticket 9")
    }
    let client = try client(server)
    // snippet: requests-responses
    // {"data": [{"id": 1, "created_at": "2026-11-25T10:00:01.123Z", …}], "meta": {"next_page": 2}}
    let tracker = JSONMapping(keyPath: "data", dates: .iso8601, keys: .snakeCase)

    // Every page of open tickets, walked by meta.next_page (or `paging: .link`).
    let open = ApiRequest<[Ticket]>(
      .get("tickets", query: [URLQueryItem(name: "state", value: "open")]), mapping: tracker)
    let tickets = try await client.all(open, paging: .field("meta.next_page", query: "page"))

    // A POST with a JSON body written as the api spells it: {"due_at": "2025-12-01T09:00:00.000Z", …}
    let new = NewTicket(title: "Crash", dueAt: Date(timeIntervalSince1970: 1_764_579_600))
    let created = try await client.send(
      ApiRequest<Ticket>(
        .post("tickets", body: try .json(new, encoder: tracker.encoder())), mapping: tracker))

    // A refused answer keeps its status, headers and body; 404 is its own kind of failure.
    do {
      _ = try await client.send(ApiRequest<Ticket>(.get("tickets/9"), mapping: tracker))
    } catch ApiError.status(let failure) where failure.kind == .notFound {
      print(failure)  // GET tickets/9 was not found (HTTP 404): no ticket 9.
    }
    // end snippet
    #expect(tickets.count == 6 && created.id == 7)
    let missing = await #expect(throws: ApiError.self) {
      try await client.send(ApiRequest<Ticket>(.get("tickets/9"), mapping: tracker))
    }
    #expect(missing?.description == "GET tickets/9 was not found (HTTP 404): no ticket 9.")
  }

  @Test func aQueryValueArrivesAsWritten() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/search") { request in .json(request.query) }
    let value = "a+b&c=d é #%"
    let echoed = try await client(server).send(
      ApiRequest<[String: String]>(.get("search", query: [.init(name: "q", value: value)])))
    #expect(echoed == ["q": value])
  }

  // MARK: The cache

  @Test func aTimestampWithMillisecondsRoundTripsThroughTheCacheSoAnUnchangedAnswerIsOne()
    async throws
  {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    defer { Task { await server.stop() } }
    server.handle("GET", "/api/tickets/{id}") { _ in
      .staticFile(
        Data(#"{"data": {"id": 1, "title": "T1", "created_at": "2026-11-25T10:00:07.123Z"}}"#.utf8))
    }
    let folder = try TemporaryDirectory("tickets")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    let store = try SQLiteCacheStore.open(at: folder.appending("cache.sqlite"))
    let client = try client(server)
    let stack = ServiceStack(
      client: client, layers: [CachingLayer(store: store, policy: .cacheThenNetwork)])
    let call = ServiceCall<Ticket>(ApiRequest(.get("tickets/1"), mapping: Self.mapping))
    let fresh = try await stack.answer(call).value

    let early = Mutex<[Ticket]>([])
    let again = try await stack.answer(call) { answer in
      early.withLock { $0.append(answer.value) }
    }.value
    let cached = try #require(early.withLock { $0.first })
    // The copy read back equals the api's, to the millisecond and below: a front that shows
    // the copy and then the answer only when it differs shows one answer.
    #expect(cached == fresh && cached.createdAt == fresh.createdAt)
    #expect(again == cached)
  }
}
