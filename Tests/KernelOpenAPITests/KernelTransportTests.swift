import Api
import Composition
import Domain
import Foundation
import HTTPTypes
import KernelOpenAPI
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import OpenAPIRuntime
import SampleApi
import Testing

/// A generated client's transport through Kernel, over real loopback HTTP: the environment's
/// base URL, the authenticator across an expiry, refusals handed back as responses, and the
/// operations' stacks from the config (the offline profile answers a GET a layered run kept).
@Suite(.timeLimit(.minutes(1))) struct KernelTransportTests {
  /// What a generated client sends for `operationID`: a path below the document's server URL.
  static func send(
    _ transport: some ClientTransport, _ operationID: String, _ path: String,
    method: HTTPRequest.Method = .get, body: String? = nil, headers: HTTPFields = [:]
  ) async throws -> (status: Int, body: String) {
    let request = HTTPRequest(
      method: method, scheme: nil, authority: nil, path: path, headerFields: headers)
    let (response, answer) = try await transport.send(
      request, body: body.map { HTTPBody($0) },
      baseURL: URL(string: "http://127.0.0.1:9/the-documents-server")!, operationID: operationID)
    var bytes = Data()
    if let answer { bytes = try await Data(collecting: answer, upTo: 1 << 20) }
    return (response.status.code, String(decoding: bytes, as: UTF8.self))
  }

  /// A config of one environment at `base`, the memory context, and `profiles` (YAML lines
  /// indented under `profiles:`).
  static func yaml(_ base: URL, profiles: String) -> String {
    """
    profile: layered
    environment: local
    context: memory
    environments:
      local: {baseURL: "\(base.absoluteString)"}
    profiles:
    \(profiles.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n"))
    """
  }

  /// The services `keys`: the whole api's stack and those of operations of their own.
  struct Operations: Assembly {
    let keys: [String]
    func assemble(into catalog: inout Catalog) {
      for key in keys { catalog.service(key) }
    }
  }

  /// The movie operations' app composed for `profile` from `yaml`, its data in `data`.
  static func composed(
    _ assembly: Operations, _ yaml: String, _ profile: String, data: URL
  ) throws -> Composed {
    var app = KernelApp(name: "movies-openapi")
    app.add(assembly)
    let config = try app.document(yaml: yaml, file: "Config/movies-openapi.yaml")
      .resolve(profile: profile)
    return try app.compose(config: config, runtime: Runtime(dataDirectory: data))
  }

  @Test func theEnvironmentsBaseURLReplacesTheServersAndARefusalIsAResponse() async throws {
    let ratings = SampleRatings()
    try await withLoopbackApi(routes: .sampleMovies(ratings: ratings), authentication: nil) {
      api in
      let transport = KernelTransport(ServiceStack(client: api.client, layers: []))
      let found = try await Self.send(transport, "getMovie", "/movies/1")
      #expect(found.status == 200)
      #expect(found.body.contains("Finding Dory"))
      let missing = try await Self.send(transport, "getMovie", "/movies/999")
      #expect(missing.status == 404)
      #expect(missing.body.contains("no movie with id 999"))
      var headers = HTTPFields()
      headers[.contentType] = "application/json"
      let rated = try await Self.send(
        transport, "rateMovie", "/movies/3/ratings", method: .post, body: #"{"score": 77}"#,
        headers: headers)
      #expect(rated.status == 201)
      #expect(ratings.applied(to: 3).map(\.score) == [77])
    }
  }

  @Test func theAuthenticatorRefreshesForAGeneratedClientAsForAHandWrittenOne() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    try await withLoopbackApi(routes: .sampleMovies(), options: options) { api in
      let transport = KernelTransport(ServiceStack(client: api.client, layers: []))
      #expect(try await Self.send(transport, "getMovie", "/movies/1").status == 200)
      #expect(api.responder.tokensIssued == 1)
      // Every token expires: 20 calls at once are refused, one refresh serves them all.
      api.responder.expireTokens()
      let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
        for id in 1...20 {
          group.addTask {
            try await Self.send(transport, "getMovie", "/movies/\(id % 10 + 1)").status
          }
        }
        return try await group.reduce(into: []) { $0.append($1) }
      }
      #expect(statuses == Array(repeating: 200, count: 20))
      #expect(api.responder.tokensIssued == 2)
      // The same through Kernel's own movie service, on the same client: no refresh needed.
      #expect(try await api.movies.movie(id: 2).id == 2)
      #expect(api.responder.tokensIssued == 2)
    }
  }

  @Test func theOfflineProfileAnswersAGeneratedGetALayeredRunKept() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let assembly = Operations(keys: ["movieOperations", "getTopGrossing"])
    let yaml = Self.yaml(
      server.baseURL,
      profiles: """
        layered: {movieOperations: ["cache(networkFirst)", api], getTopGrossing: [memory, "cache(networkFirst)", api]}
        offline: {movieOperations: [store], getTopGrossing: [store]}
        """)
    func transport(_ profile: String) throws -> KernelTransport {
      let composed = try Self.composed(assembly, yaml, profile, data: data.url)
      return KernelTransport(
        try composed.stack("movieOperations"),
        operations: try composed.stacks(named: ["getMovie", "getTopGrossing"]))
    }
    let layered = try transport("layered")
    #expect(layered.operations.keys.sorted() == ["getTopGrossing"])
    let movie = try await Self.send(layered, "getMovie", "/movies/4")
    let top = try await Self.send(layered, "getTopGrossing", "/movies/topGrossing/2016")
    #expect(movie.status == 200)
    await server.stop()

    let offline = try transport("offline")
    let kept = try await Self.send(offline, "getMovie", "/movies/4")
    #expect(kept == movie)
    #expect(try await Self.send(offline, "getTopGrossing", "/movies/topGrossing/2016") == top)
    // Nothing kept for another path: the cache's own sentence, no request.
    await #expect(throws: LayerError.miss(what: "getMovie movies/5")) {
      try await Self.send(offline, "getMovie", "/movies/5")
    }
    // A write under a stack with no api is refused, not kept by a read cache.
    await #expect(throws: LayerError.needsApi(what: "rateMovie POST movies/4/ratings")) {
      try await Self.send(offline, "rateMovie", "/movies/4/ratings", method: .post, body: "{}")
    }
  }

  @Test func aGeneratedWriteIsKeptInTheOutboxAndSyncedOnce() async throws {
    let ratings = SampleRatings()
    let server = try await FixtureServer.start(routes: .sampleMovies(ratings: ratings))
    defer { Task { await server.stop() } }
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let assembly = Operations(keys: ["movieOperations", "rateMovie"])
    let yaml = Self.yaml(
      server.baseURL,
      profiles: """
        layered: {movieOperations: [api], rateMovie: [outbox, api]}
        offline: {movieOperations: [store], rateMovie: [outbox, store]}
        """)
    func composed(_ profile: String) throws -> Composed {
      try Self.composed(assembly, yaml, profile, data: data.url)
    }
    var headers = HTTPFields()
    headers[.contentType] = "application/json"
    headers[HTTPField.Name("Idempotency-Key")!] = "rate-4-once"
    func transport(_ composed: Composed) throws -> KernelTransport {
      KernelTransport(
        try composed.stack("movieOperations"), operations: try composed.stacks(named: ["rateMovie"])
      )
    }
    let offline = try transport(try composed("offline"))
    let kept = try await Self.send(
      offline, "rateMovie", "/movies/4/ratings", method: .post, body: #"{"score": 44}"#,
      headers: headers)
    #expect(kept.status == 202)
    #expect(ratings.applied(to: 4).isEmpty)

    let layered = try composed("layered")
    let writes = try #require(try await layered.keptWrites())
    #expect(writes.map(\.idempotencyKey) == ["rate-4-once"])
    #expect(try await layered.syncOutbox(force: false)?.sent.count == 1)
    #expect(try await layered.syncOutbox(force: true)?.tried == 0)
    #expect(ratings.applied(to: 4).map(\.score) == [44])
    // Sent at once when the api answers: the api's own response, the key honoured.
    let sent = try await Self.send(
      try transport(layered), "rateMovie",
      "/movies/4/ratings", method: .post, body: #"{"score": 44}"#, headers: headers)
    #expect(sent.status == 201)
    #expect(ratings.applied(to: 4).count == 1)
  }
}

extension KernelTransportTests {
  /// A list operation answered a page at a time (a cursor field, or `Link` with the list as the
  /// whole body) reaches its generated client as one answer holding every page's items, with
  /// no next cursor: the client never loops. The gathered answer is kept like any read.
  @Test func aPagedListOperationIsAnsweredWithEveryPage() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), authentication: nil) { api in
      api.responder.handle("GET", "/api/things") { request in
        let page =
          request.query["cursor"] == "b"
          ? #"{"items": [3], "next_cursor": null, "total": 3}"#
          : #"{"items": [1, 2], "next_cursor": "b", "total": 3}"#
        return SampleResponse(
          status: 200, headers: ["Content-Type": "application/json", "ETag": "\"page\""],
          body: Data(page.utf8))
      }
      api.responder.handle("GET", "/api/rows") { request in
        let second = request.query["page"] == "2"
        var headers = ["Content-Type": "application/json"]
        if !second { headers["Link"] = "</api/rows?page=2>; rel=\"next\"" }
        return SampleResponse(
          status: 200, headers: headers, body: Data((second ? "[\"c\"]" : "[\"a\", \"b\"]").utf8))
      }
      let store = InMemoryStore()
      let transport = KernelTransport(
        ServiceStack(
          client: api.client, layers: [CachingLayer(store: store, policy: .networkFirst)]),
        paging: [
          "listThings": (.field("next_cursor", query: "cursor"), items: "items"),
          "listRows": (.link, items: ""),
        ])
      let things = try await Self.send(transport, "listThings", "/things")
      #expect(things.status == 200)
      let body = try JSONDecoder().decode(JSONValue.self, from: Data(things.body.utf8))
      #expect(
        body
          == .object([
            "items": .array([.integer(1), .integer(2), .integer(3)]), "next_cursor": .null,
            "total": .integer(3),
          ]))
      #expect(api.responder.requests(to: "things") == 2)
      let rows = try await Self.send(transport, "listRows", "/rows")
      #expect(
        try JSONDecoder().decode([String].self, from: Data(rows.body.utf8)) == ["a", "b", "c"])

      // Kept whole: the store alone answers it with every page.
      let offline = KernelTransport(
        ServiceStack(client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly)]))
      let kept = try await Self.send(offline, "listThings", "/things")
      #expect(try JSONDecoder().decode(JSONValue.self, from: Data(kept.body.utf8)) == body)
    }
  }

  /// Says each answer came from the cache, `age` seconds old.
  struct Aged: ServiceLayer {
    let age: TimeInterval
    func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
      -> Answer<Value>
    {
      var answer = try await next()
      answer.origin = .cache
      answer.age = age
      return answer
    }
  }

  /// A read's answer says where it came from in `Kernel-Origin` and `Age`, for a generated
  /// client whose document declares them; an age past any whole number is left unsaid, not a
  /// trap.
  @Test func aReadSaysWhereItCameFromInItsHeaderFields() async throws {
    try await withLoopbackApi(routes: .sampleMovies(), authentication: nil) { api in
      let origin = try #require(KernelTransport.originHeader)
      var fields: [[String?]] = []
      for layers in [[], [Aged(age: 89.6)], [Aged(age: .infinity)]] {
        let transport = KernelTransport(ServiceStack(client: api.client, layers: layers))
        let (response, _) = try await transport.send(
          HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/movies/1"), body: nil,
          baseURL: URL(fileURLWithPath: "/"), operationID: "getMovie")
        #expect(response.status == .ok)
        fields.append([response.headerFields[origin], response.headerFields[.age]])
      }
      #expect(fields == [["network", nil], ["cache", "90"], ["cache", nil]])
    }
  }
}
