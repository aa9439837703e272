import Api
import Composition
import Foundation
import KernelTesting
import Layers
import SampleApi
import Testing

/// The books app composed from its own YAML, prefix and catalog, against loopback servers.
@Suite(.timeLimit(.minutes(1))) struct OpenCompositionTests {
  /// The books app's config: three profiles, two environments with their own keys, the app's
  /// adapter (with a parameter) and retrier beside Kernel's.
  static func yaml(staging: URL, other: URL) -> String {
    """
    profile: layered
    environment: staging
    context: memory
    environments:
      staging: {baseURL: "\(staging.absoluteString)", apiKey: "k-staging"}
      other: {baseURL: "\(other.absoluteString)", apiKey: "k-other"}
    adapters: [defaultHeaders, "apiKey(header: X-Library-Card)"]
    retriers: [rateLimit, backoff]
    retry: {maxRetries: 1, baseDelayMs: 1}
    books: [api]
    profiles:
      api: {}
      offline: {books: [store]}
      layered: {books: [logging, "cache(networkFirst)", api]}
    """
  }

  static func app() -> KernelApp {
    // snippet: books-compose
    var app = KernelApp(name: "books")  // BOOKS_* variables, Config/books.yaml, data dir "books"
    app.add(BooksAssembly())
    // end snippet
    return app
  }

  static func books(
    _ app: KernelApp, _ yaml: String, profile: String, data: URL,
    variables: [String: String] = [:], log: @escaping @Sendable (String) -> Void = { _ in }
  ) throws -> (ServiceStack, KernelConfig) {
    // snippet: books-compose
    let config = try app.document(yaml: yaml, file: "Config/books.yaml", variables: variables)
      .resolve(profile: profile)  // or app.load(path:workingDirectory:variables:flags:)
    let composed = try app.compose(config: config, runtime: Runtime(dataDirectory: data, log: log))
    let books = try composed.stack("books")  // validated: graph, doctor know it
    // end snippet
    return (books, config)
  }

  @Test func theBooksAppGetsItsApiItsCacheAndItsOfflineStackFromItsConfig() async throws {
    let server = try await FixtureServer.start(routes: FixtureRoutes())
    let cards = Recorder<String>()
    let tries = Counter()
    server.handle("GET", "/api/books/7") { request in
      cards.append(request.headers["x-library-card"] ?? "none")
      // The first try is rate limited: the app's own retrier sends it again.
      if tries.increment() == 1 { return SampleResponse(status: 429) }
      return SampleResponse(status: 200, body: Data(#"{"id": 7, "title": "Dune"}"#.utf8))
    }
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let app = Self.app()
    let yaml = Self.yaml(staging: server.baseURL, other: server.baseURL)
    // Its own prefix: BOOKS_*, not KERNEL_*.
    let variables = ["BOOKS_ENVIRONMENTS_STAGING_API_KEY": "k-variable", "KERNEL_PROFILE": "x"]

    let (layered, config) = try Self.books(
      app, yaml, profile: "layered", data: data.url, variables: variables)
    #expect(try await layered.answer(.book(id: 7)).value == Book(id: 7, title: "Dune"))
    #expect(cards.all == ["k-variable", "k-variable"])
    #expect(config.string("shelf") == "to-read")
    let shown = config.settings.first { $0.key == "environments.staging.apiKey" }
    #expect(
      shown?.value == "REDACTED" && shown?.source == .variable("BOOKS_ENVIRONMENTS_STAGING_API_KEY")
    )

    await server.stop()
    // The server is gone: the offline profile answers from what the layered one stored,
    // and builds no api side at all.
    let (offline, _) = try Self.books(app, yaml, profile: "offline", data: data.url)
    #expect(try await offline.answer(.book(id: 7)).value.title == "Dune")
    await #expect(throws: LayerError.miss(what: "book 8")) {
      try await offline.answer(.book(id: 8))
    }
    let (api, _) = try Self.books(app, yaml, profile: "api", data: data.url)
    await #expect(throws: ApiError.self) { try await api.answer(.book(id: 7)) }
  }

  @Test func theSecretHeaderReachesItsOriginAndNeverTheOneARedirectLeadsTo() async throws {
    let first = try await FixtureServer.start(routes: FixtureRoutes())
    let second = try await FixtureServer.start(routes: FixtureRoutes())
    defer {
      Task {
        await first.stop()
        await second.stop()
      }
    }
    let seenFirst = Recorder<String>()
    let seenSecond = Recorder<[String: String]>()
    first.handle("GET", "/api/books/9") { request in
      seenFirst.append(request.headers["x-library-card"] ?? "none")
      let elsewhere = second.baseURL.appendingPathComponent("books/9").absoluteString
      return SampleResponse(status: 307, headers: ["Location": elsewhere])
    }
    second.handle("GET", "/api/books/9") { request in
      seenSecond.append(request.headers)
      return SampleResponse(status: 200, body: Data(#"{"id": 9, "title": "Emma"}"#.utf8))
    }
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let trace = Recorder<String>()
    let (books, _) = try Self.books(
      Self.app(), Self.yaml(staging: first.baseURL, other: second.baseURL), profile: "api",
      data: data.url, log: { trace.append($0) })

    #expect(try await books.answer(.book(id: 9)).value.title == "Emma")
    // A retry (a connection the pool had kept and the system closed) may send it again: always
    // to its own origin, with its header; never to the one the redirect leads to.
    #expect(!seenFirst.all.isEmpty && seenFirst.all.allSatisfy { $0 == "k-staging" })
    #expect(!seenSecond.all.isEmpty)
    #expect(seenSecond.all.allSatisfy { $0["x-library-card"] == nil })
    // -v: the trace names the header, never its value.
    let lines = trace.all.joined(separator: "\n")
    #expect(lines.contains("X-Library-Card: <redacted>"), "\(lines)")
    #expect(!lines.contains("k-staging"))
  }

  @Test func aConfigNamingWhatTheCatalogLacksSaysWhatItHas() throws {
    let url = try #require(URL(string: "http://127.0.0.1:9/api/"))
    let yaml = Self.yaml(staging: url, other: url)
      .replacingOccurrences(of: "[rateLimit, backoff]", with: "[rateLimit, patience]")
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let error = #expect(throws: (any Error).self) {
      _ = try Self.books(Self.app(), yaml, profile: "api", data: data.url)
    }
    #expect(
      "\(error.map { KernelApp.rootCause(of: $0) } ?? CancellationError())"
        == "Config/books.yaml: retriers[1] names \"patience\", which is not one of: backoff, rateLimit."
    )
    let misspelt = Self.yaml(staging: url, other: url)
      .replacingOccurrences(of: "[rateLimit, backoff]", with: "[\"rateLimit(maxx: 3)\", backoff]")
    let label = #expect(throws: (any Error).self) {
      _ = try Self.books(Self.app(), misspelt, profile: "api", data: data.url)
    }
    #expect(
      "\(label.map { KernelApp.rootCause(of: $0) } ?? CancellationError())"
        == "Config/books.yaml: retriers[0] rateLimit(maxx: 3) has no label maxx; did you mean max?")
    let pigeon = Self.yaml(staging: url, other: url)
      .replacingOccurrences(of: "apiKey: \"k-other\"", with: "apiKey: k, transport: pigeon")
    let transport = #expect(throws: ConfigError.self) {
      _ = try Self.books(Self.app(), pigeon, profile: "api", data: data.url)
    }
    #expect(
      transport?.description
        == "Config/books.yaml: environments.other.transport names \"pigeon\", which is not one of: http."
    )
    // A key the app did not add is refused where it is written.
    let unknown = #expect(throws: ConfigError.self) {
      _ = try Self.app().document(yaml: "isbn: 1\n", file: "Config/books.yaml")
    }
    #expect(unknown?.description.hasPrefix("Config/books.yaml:1:1: unknown key isbn") == true)
  }

  /// The one compose validates the graph it returns: the saved context is read, and tightened
  /// with one warning, before anything is asked of it.
  @Test func composingValidatesTheGraphItReturns() throws {
    let url = try #require(URL(string: "http://127.0.0.1:9/api/"))
    let yaml = Self.yaml(staging: url, other: url)
      .replacingOccurrences(of: "context: memory", with: "context: persistent")
    let data = try TemporaryDirectory()
    defer { data.remove() }
    try FileManager.default.createDirectory(at: data.url, withIntermediateDirectories: true)
    let context = data.url.appendingPathComponent("context.json")
    try Data(#"{"environment": "staging", "tokens": {}}"#.utf8).write(to: context)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: context.path)
    func mode() throws -> Int? {
      (try FileManager.default.attributesOfItem(atPath: context.path)[.posixPermissions]
        as? NSNumber)?.intValue
    }
    let app = Self.app()
    let config = try app.document(yaml: yaml, file: "Config/books.yaml").resolve(profile: "layered")
    let warnings = Recorder<String>()
    let runtime = Runtime(dataDirectory: data.url, warn: warnings.append)

    #expect(try mode() == 0o644)
    let composed = try app.compose(config: config, runtime: runtime)
    #expect(try mode() == 0o600)
    #expect(warnings.all.count == 1)
    #expect(composed.contextPersists)
  }

  @Test func appSideIsSmall() throws {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("BooksApp.swift")
    let lines = try Snippets.regions(named: "books-app", under: file.deletingLastPathComponent())
    #expect(!lines.isEmpty && lines.count <= 60, "\(lines.count) lines")
  }
}
