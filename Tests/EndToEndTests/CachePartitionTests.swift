import Foundation
import KernelTesting
import SampleApi
import Synchronization
import Testing

/// The cache keeps environments apart: an answer staging gave never answers for production,
/// under the offline profile or the layered one, and production is never sent staging's
/// validators.
@Suite(.timeLimit(.minutes(5))) struct CachePartitionTests {
  /// A server answering `movies/1` with a movie named `name` and the ETag `"name"`, keeping the
  /// `If-None-Match` of every request.
  private static func server(naming name: String, seen: Recorder<String>) async throws
    -> FixtureServer
  {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    server.handle("GET", "/api/movies/1") { request in
      seen.append(request.headers["if-none-match"] ?? "none")
      let movie =
        #"{"id": 1, "name": "\#(name)", "year": 2016, "releaseDate": "2016-06-17","#
        + #" "grossing": 1, "rating": 1.0, "cast": []}"#
      return SampleResponse(
        status: 200, headers: ["Content-Type": "application/json", "ETag": "\"\(name)\""],
        body: Data(movie.utf8))
    }
    return server
  }

  @Test func aStagingCopyNeverAnswersForProductionOfflineOrLayered() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let stagingSeen = Recorder<String>()
    let productionSeen = Recorder<String>()
    let staging = try await Self.server(naming: "Staging Dory", seen: stagingSeen)
    let production = try await Self.server(naming: "Production Dory", seen: productionSeen)
    try kernel.write(
      """
      profile: layered
      environment: staging
      environments:
        staging: {baseURL: "\(staging.baseURL.absoluteString)"}
        production: {baseURL: "\(production.baseURL.absoluteString)"}
      profiles:
        layered: {movies: ["cache(networkFirst)", api]}
        offline: {movies: [store]}
      """, to: "Config/kernel.yaml")
    let json = ["--format", "json"]
    let fromStaging = try await kernel.run(["movies", "get", "1"] + json)
    #expect(fromStaging.movieNames == ["Staging Dory"], "\(fromStaging)")

    // Offline in production: nothing of production's is cached, and staging's is not its.
    let offline = try await kernel.run(
      ["--environment", "production", "--profile", "offline", "movies", "get", "1"] + json)
    #expect(offline.status == 69, "\(offline)")
    #expect(offline.stdout.isEmpty, "\(offline)")

    // After env use, the layered stack asks production, without staging's ETag.
    #expect(try await kernel.run(["env", "use", "production"]).status == 0)
    let layered = try await kernel.run(["movies", "get", "1"] + json)
    #expect(layered.movieNames == ["Production Dory"], "\(layered)")
    #expect(productionSeen.all == ["none"])

    // Each environment's copy answers for it alone, offline too.
    let productionOffline = try await kernel.run(
      ["--profile", "offline", "movies", "get", "1"] + json)
    #expect(productionOffline.movieNames == ["Production Dory"], "\(productionOffline)")
    let stagingOffline = try await kernel.run(
      ["--environment", "staging", "--profile", "offline", "movies", "get", "1"] + json)
    #expect(stagingOffline.movieNames == ["Staging Dory"], "\(stagingOffline)")
    // And staging, asked again, is offered its own ETag only.
    _ = try await kernel.run(["--environment", "staging", "movies", "get", "1"] + json)
    #expect(stagingSeen.all == ["none", "\"Staging Dory\""])
    await staging.stop()
    await production.stop()

    // Stats count each environment's answers (origin and base path); one environment is cleared.
    let origin = { (server: FixtureServer) in "http://127.0.0.1:\(server.port)/api/" }
    let stats = try await kernel.run(["cache", "stats"])
    #expect(stats.stdout.contains("  \(origin(staging)) (staging): 1\n"), "\(stats)")
    #expect(stats.stdout.contains("  \(origin(production)) (production): 1\n"), "\(stats)")
    let statsJSON = try await kernel.run(["cache", "stats"] + json)
    let origins = statsJSON.json?["origins"] as? [[String: Any]]
    #expect(
      Set(origins?.compactMap { ($0["environments"] as? [String])?.first } ?? [])
        == ["staging", "production"])
    let cleared = try await kernel.run(["cache", "clear", "staging"])
    #expect(
      cleared.stdout == "Cleared the cache: 1 answer of staging (\(origin(staging))) removed.\n",
      "\(cleared)")
    let stagingGone = try await kernel.run(
      ["--environment", "staging", "--profile", "offline", "movies", "get", "1"] + json)
    #expect(stagingGone.status == 69)
    let productionKept = try await kernel.run(
      ["--profile", "offline", "movies", "get", "1"] + json)
    #expect(productionKept.movieNames == ["Production Dory"], "\(productionKept)")
    let unknown = try await kernel.run(["cache", "clear", "qa"])
    #expect(unknown.status == 64 && unknown.stderr.contains(#"There is no environment "qa""#))
  }
}

extension CachePartitionTests {
  /// The partition is origin, base path and identity: HTTP Basic's user keeps their answers
  /// (anna's never serve bert, nor an environment without auth on the same origin), and an
  /// environment on the same origin under another base path has answers of its own.
  @Test func aBasicUsersAnswersAndAnotherBasePathsAreKeptApart() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let base = server.baseURL.absoluteString
      let other = "http://127.0.0.1:\(server.port)/other/"
      try kernel.write(
        """
        profile: layered
        profiles:
          layered: {movies: ["cache(networkFirst)", api]}
          offline: {movies: [store]}
        environment: local
        environments:
          local: {baseURL: "\(base)", auth: basic, username: anna, password: pw}
          open: {baseURL: "\(base)", auth: none}
          other: {baseURL: "\(other)", auth: basic, username: anna, password: pw}
        """, to: "Config/kernel.yaml")
      #expect(try await kernel.run(["movies", "get", "1"]).status == 0)
      let offline = ["--profile", "offline", "movies", "get", "1"]
      let anna = try await kernel.run(offline)
      #expect(anna.status == 0 && anna.stdout.contains("Finding Dory"), "\(anna)")
      let bert = try await kernel.run(
        offline, variables: ["KERNEL_ENVIRONMENTS_LOCAL_USERNAME": "bert"])
      #expect(bert.status == 69, "\(bert)")
      let open = try await kernel.run(["--environment", "open"] + offline)
      #expect(open.status == 69, "\(open)")
      let elsewhere = try await kernel.run(["--environment", "other"] + offline)
      #expect(elsewhere.status == 69, "\(elsewhere)")
      let cleared = try await kernel.run(["cache", "clear", "other"])
      #expect(cleared.stdout.contains("0 answers of other"), "\(cleared)")
      #expect(try await kernel.run(offline).status == 0)
    }
  }
}

extension CachePartitionTests {
  /// `--base-url` moves the environment in use for the run, and what names an environment does
  /// too: `cache stats` names its answers, `cache clear NAME` removes them, `env list` shows the
  /// URL the run asks (sent over http, not answered in process).
  @Test func answersOfAReplacedBaseURLAreTheEnvironmentsToShowAndClear() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      #expect(try await kernel.run(local + ["movies", "get", "1", "2"]).status == 0)
      let stats = try await kernel.run(local + ["cache", "stats"])
      #expect(stats.stdout.contains("  \(server.baseURL.absoluteString) (local): 2\n"), "\(stats)")
      let listed = try await kernel.run(["--environment", "sample"] + local.suffix(2) + ["env"])
      #expect(
        listed.stdout.contains("* sample      \(server.baseURL.absoluteString)\n"), "\(listed)")
      let cleared = try await kernel.run(local + ["cache", "clear", "local"])
      #expect(
        cleared.stdout
          == "Cleared the cache: 2 answers of local (\(server.baseURL.absoluteString)) removed.\n",
        "\(cleared)")
      let offline = try await kernel.run(local + ["--profile", "offline", "movies", "get", "1"])
      #expect(offline.status == 69, "\(offline)")
    }
  }
}
