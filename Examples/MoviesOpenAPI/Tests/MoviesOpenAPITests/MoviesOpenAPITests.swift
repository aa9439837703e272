import Composition
import Foundation
import KernelOpenAPI
import KernelTesting
import MoviesOpenAPIKit
import OpenAPIRuntime
import SampleApi
import Testing

/// The generated client through Kernel, composed from the app's own config against its fixture
/// folder on loopback; and the built `movies-openapi` against `movies-openapi serve`.
@Suite(.timeLimit(.minutes(2))) struct MoviesOpenAPITests {
  static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  static var shippedConfig: String {
    get throws {
      try String(
        contentsOf: package.appendingPathComponent("Config/movies-openapi.yaml"), encoding: .utf8)
    }
  }

  static func fixtures() throws -> FixtureRoutes {
    try .folder(package.appendingPathComponent("Fixtures"))
  }

  /// The app's config with `base` as the local environment's base URL and `auth`.
  static func composed(
    _ profile: String, base: URL, data: URL, auth: String = "none"
  ) throws -> Composed {
    let yaml = try shippedConfig.replacingOccurrences(
      of: #"local: {baseURL: "http://127.0.0.1:8080/api/"}"#,
      with: #"local: {baseURL: "\#(base.absoluteString)", auth: "\#(auth)"}"#
    )
    .replacingOccurrences(of: "context: persistent", with: "context: memory")
    let app = KernelApp.moviesOpenAPI
    let config = try app.document(yaml: yaml, file: "Config/movies-openapi.yaml")
      .resolve(profile: profile)
    return try app.compose(config: config, runtime: Runtime(dataDirectory: data))
  }

  @Test func theGeneratedClientGetsTheLayeredStackAndTheOfflineOneAnswersFromTheCache()
    async throws
  {
    let server = try await FixtureServer.start(routes: try Self.fixtures())
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let layered = try Self.composed("layered", base: server.baseURL, data: data.url)
    let first = try await MoviesAPI.movie(1, through: layered)
    #expect(first.value.name == "Finding Dory")
    #expect(first.origin == .network)
    let top = try await MoviesAPI.topGrossing(2016, through: layered).value
    #expect(top.map(\.name) == ["Rogue One", "Finding Dory"])
    await #expect(throws: MovieNotFound.self) { try await MoviesAPI.movie(9, through: layered) }
    await server.stop()

    let offline = try Self.composed("offline", base: server.baseURL, data: data.url)
    // Answered by the one store, and said so: the origin crosses the generated client as a header.
    let stored = try await MoviesAPI.movie(1, through: offline)
    #expect(stored.value.name == "Finding Dory")
    #expect(stored.origin == .cache)
    let storedTop = try await MoviesAPI.topGrossing(2016, through: offline)
    #expect(storedTop.value == top)
    #expect(storedTop.origin == .cache)
  }

  @Test func aRatingMadeOfflineIsKeptAndSentByASync() async throws {
    let server = try await FixtureServer.start(routes: try Self.fixtures())
    defer { Task { await server.stop() } }
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let offline = try Self.composed("offline", base: server.baseURL, data: data.url)
    #expect(try await MoviesAPI.rate(1, score: 80, through: offline) == .queued)
    #expect(server.responder.requests(to: "movies/1/ratings") == 0)
    let layered = try Self.composed("layered", base: server.baseURL, data: data.url)
    #expect(try await layered.syncOutbox(force: false)?.sent.count == 1)
    #expect(server.responder.requests(to: "movies/1/ratings") == 1)
    guard case .rated(let rating) = try await MoviesAPI.rate(1, score: 80, through: layered)
    else { throw TestFailure("the api was there, yet the rating was kept") }
    #expect(rating.score == 80)
  }

  @Test func theAuthenticatorRefreshesForTheGeneratedClientAcrossAnExpiry() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    let server = try await FixtureServer.start(options: options, routes: try Self.fixtures())
    defer { Task { await server.stop() } }
    let data = try TemporaryDirectory()
    defer { data.remove() }
    let api = try Self.composed("api", base: server.baseURL, data: data.url, auth: "plainToken")
    #expect(try await MoviesAPI.movie(1, through: api).value.id == 1)
    #expect(server.responder.tokensIssued == 1)
    server.responder.expireTokens()
    let names = try await withThrowingTaskGroup(of: String.self) { group in
      for index in 0..<10 {
        group.addTask { try await MoviesAPI.movie(index % 2 + 1, through: api).value.name }
      }
      return try await group.reduce(into: Set<String>()) { $0.insert($1) }
    }
    #expect(names == ["Finding Dory", "Rogue One"])
    // One refresh for the ten refused calls, as for Kernel's own client.
    #expect(server.responder.tokensIssued == 2)
  }

  @Test func theBuiltCommandLineAnswersOfflineWhatItFetchedLayered() async throws {
    let command = try BuiltCommand("movies-openapi", package: Self.package)
    defer { command.cleanUp() }
    // With no config built in, away from its file it says where to run it.
    let away = try await command.run(["get", "1"])
    #expect(away.status == 78, "\(away)")
    #expect(
      away.stderr.hasSuffix(
        "and movies-openapi has no config built in; run it where Config/movies-openapi.yaml is,"
          + " or name a file with --config or MOVIES_OPENAPI_CONFIG.\n"), "\(away)")
    try command.write(try Self.shippedConfig, to: "Config/movies-openapi.yaml")
    let server = try await ServedCommand(
      command, ["--fixtures", Self.package.appendingPathComponent("Fixtures").path])
    defer { server.terminate() }
    let url = ["--base-url", server.baseURL]
    let layered = try await command.run(url + ["get", "1"])
    #expect(layered.status == 0, "\(layered)")
    #expect(layered.stdout.hasPrefix("1  Finding Dory (2016)\n1 movie from the api in "))
    // An answer the document does not describe is the failure its status says: 404 is 66.
    let unknownYear = try await command.run(url + ["top-grossing", "--year", "3000"])
    #expect(unknownYear.status == 66, "\(unknownYear)")
    #expect(
      unknownYear.stderr
        == "getTopGrossing answered HTTP 404, which openapi.yaml does not describe.\n")
    // A script reads a rating as JSON.
    let rated = try await command.run(url + ["rate", "1", "50", "--format", "json"])
    #expect(rated.json?["movieId"] as? Int == 1 && rated.json?["score"] as? Int != nil, "\(rated)")
    await server.stop()
    let offline = try await command.run(url + ["--profile", "offline", "get", "1"])
    #expect(offline.status == 0, "\(offline)")
    // Where the answer came from, as every command of Kernel's says it.
    #expect(offline.stdout.hasPrefix("1  Finding Dory (2016)\n1 movie from cache, "), "\(offline)")
    // A generated operation's kept write is listed by its operation, method and path, once.
    let queued = try await command.run(url + ["--profile", "offline", "rate", "1", "50"])
    #expect(queued.stdout.hasPrefix("queued:"), "\(queued)")
    let listed = try await command.run(url + ["outbox", "list"])
    #expect(
      listed.stdout.contains(" rateMovie POST movies/1/ratings ")
        && !listed.stdout.contains("rateMovie: rateMovie"), "\(listed)")
    // The app's variables are named as a shell can set them: `-` in its name is `_` in theirs.
    let missing = try await command.run(
      url + ["get", "2"], variables: ["MOVIES_OPENAPI_PROFILE": "offline"])
    #expect(missing.status == 69, "\(missing)")
    #expect(missing.stderr.contains("the offline profile does not ask the api"), "\(missing)")
  }
}
