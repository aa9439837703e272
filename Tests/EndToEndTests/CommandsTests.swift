import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

/// env, auth, graph, doctor, cache and the command line itself, on the built binary.
@Suite(.timeLimit(.minutes(5))) struct CommandsTests {
  /// `kernel serve` of the movie example's sample api says on stop what its routes did: the
  /// ratings it applied (`FixtureRoutes.summary`), after Kernel's own counts.
  @Test func serveEndsItsSummaryWithWhatTheSampleApiDid() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel)
    defer { server.terminate() }
    let local = ["--profile", "api", "--environment", "local", "--base-url", server.baseURL]
    let rated = try await kernel.run(local + ["movies", "rate", "3", "80"])
    #expect(rated.status == 0, "\(rated)")
    #expect(
      rated.stdout.hasPrefix("Rated movie 3 80 of 100; the api's id for the rating is "),
      "\(rated)")
    let summary = await server.stop()
    #expect(summary.contains("0 expired tokens refused; 1 rating applied"), "\(summary)")
  }

  @Test func envUseIsSavedAndEnvironmentStillWinsForOneRun() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel)
    defer { server.terminate() }
    let use = try await kernel.run(["env", "use", "local"])
    #expect(use.status == 0, "\(use)")
    #expect(try await kernel.run(["env", "list"]).stdout.contains("* local"))

    // The saved environment is used: its base URL replaced by the variable reaches the server.
    let saved = try await kernel.run(
      ["--profile", "api", "movies", "get", "1", "--format", "json"],
      variables: ["KERNEL_BASE_URL": server.baseURL])
    #expect(saved.status == 0, "\(saved)")
    #expect(saved.json?["origin"] as? String == "network")
    #expect(await server.stop().contains("answered 1 request,"))

    // --environment wins for one run, and is not saved.
    let once = try await kernel.run([
      "--profile", "api", "--environment", "sample", "movies", "get", "2",
    ])
    #expect(once.status == 0, "\(once)")
    #expect(try await kernel.run(["env", "list"]).stdout.contains("* local"))

    // A variable that chooses another wins in every run that has it: `env use` says so.
    let shadowed = try await kernel.run(
      ["env", "use", "local"], variables: ["KERNEL_ENVIRONMENT": "sample"])
    #expect(
      shadowed.stdout.hasSuffix(
        "saved for later runs; but KERNEL_ENVIRONMENT is set to sample, which chooses instead in"
          + " every run that has it (unset it to use local).\n"), "\(shadowed)")

    // A base URL given with it is for that run: said, as it is not what is saved.
    let based = try await kernel.run(
      ["env", "use", "local", "--base-url", "http://127.0.0.1:9/api/"])
    #expect(
      based.stdout.hasSuffix(
        "saved for later runs; --base-url is for one run and is not saved (set"
          + " environments.local.baseURL in the config to keep a base URL).\n"), "\(based)")

    let unknown = try await kernel.run(["env", "use", "staging"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.contains("There is no environment \"staging\""))
  }

  @Test func authLoginStatusLogoutNeverPrintTheToken() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--require-auth"])
    let local = ["--environment", "local", "--base-url", server.baseURL]
    #expect(
      try await kernel.run(local + ["auth", "status"]).stdout.contains("Not logged in to local"))
    let login = try await kernel.run(local + ["auth", "login"])
    #expect(login.status == 0, "\(login)")
    let status = try await kernel.run(local + ["auth", "status", "--format", "json"])
    #expect(status.json?["loggedIn"] as? Bool == true)
    let movies = try await kernel.run(local + ["--profile", "api", "movies", "get", "4"])
    #expect(movies.status == 0, "\(movies)")

    let saved = try String(
      contentsOf: kernel.dataDirectory.appendingPathComponent("context.json"), encoding: .utf8)
    let token = try #require(
      (try JSONSerialization.jsonObject(with: Data(saved.utf8)) as? [String: Any])
        .flatMap { $0["credentials"] as? [String: [String: Any]] }?.values.first?["value"]
        .flatMap { $0 as? [String: String] }?["secret"])
    for run in [login, status, movies] {
      #expect(!run.stdout.contains(token) && !run.stderr.contains(token))
    }
    let logout = try await kernel.run(local + ["auth", "logout"])
    #expect(logout.stdout.contains("Logged out of local"))
    #expect(try await kernel.run(local + ["auth", "status"]).stdout.contains("Not logged in"))
    #expect(await server.stop().contains("1 to auth"))
  }

  @Test func theOfflineGraphHasNoTransportAndTheLayeredOneHas() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let offline = try await kernel.run(["--profile", "offline", "graph"])
    #expect(offline.status == 0, "\(offline)")
    #expect(offline.stdout.contains("ServiceStack tagged \"movies\""))
    #expect(!offline.stdout.contains("Transport") && !offline.stdout.contains("ApiClient"))
    let layered = try await kernel.run(["graph", "--format", "mermaid"])
    #expect(layered.stdout.hasPrefix("graph"))
    #expect(layered.stdout.contains("Transport") && layered.stdout.contains("CacheStore"))
    let dot = try await kernel.run(["graph", "--profile", "api", "--format", "dot"])
    #expect(dot.stdout.hasPrefix("digraph"))
    #expect(try await kernel.run(["graph", "--format", "json"]).status == 64)
  }

  @Test func doctorBootsEveryProfileAndFailsOnAnUnwritableDataDir() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let healthy = try await kernel.run(["doctor"])
    #expect(healthy.status == 0, "\(healthy)")
    for profile in ["api", "layered", "offline"] {
      #expect(healthy.stdout.contains("ok    profile \(profile)"))
    }
    #expect(
      healthy.stdout.contains(
        "ok    api: sample answers at https://sample.kernel.invalid/api/ (HTTP 404 for the base"),
      "\(healthy)")
    // An api out of reach is said, not failed on: the app answers from what it has.
    let away = try await kernel.run(["--base-url", "http://127.0.0.1:9/api/", "doctor"])
    #expect(away.status == 0, "\(away)")
    #expect(
      away.stdout.contains(
        "warn  api: sample cannot be reached now: GET the base URL could not reach 127.0.0.1"),
      "\(away)")
    let json = try await kernel.run([
      "--base-url", "http://127.0.0.1:9/api/", "doctor", "--format", "json",
    ])
    let api = (json.json?["checks"] as? [[String: Any]])?.first { $0["check"] as? String == "api" }
    #expect(api?["ok"] as? Bool == true && api?["warning"] as? Bool == true, "\(json)")
    let blocked = kernel.home.appendingPathComponent("blocked")
    try "not a folder".write(to: blocked, atomically: true, encoding: .utf8)
    let broken = try await kernel.run([
      "doctor", "--data-dir", blocked.appendingPathComponent("kernel").path,
    ])
    #expect(broken.status == 78, "\(broken)")
    #expect(broken.stdout.contains("FAIL  data dir"))
    #expect(broken.stderr.contains("--data-dir"))
  }

  @Test func cacheStatsAndClear() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "top-grossing", "--year", "2016"])
    _ = try await kernel.run(["movies", "get", "1", "2"])
    // Ten movies stored once each (the list's, movies 1 and 2 among them) and the list as
    // their ids: 11 rows; the item reads stored no row of their own.
    let stats = try await kernel.run(["cache", "stats", "--format", "json"])
    #expect(stats.json?["entries"] as? Int == 11, "\(stats)")
    let clear = try await kernel.run(["cache", "clear"])
    #expect(clear.stdout.contains("11 answers removed"))
    #expect(
      try await kernel.run(["cache", "stats", "--format", "json"]).json?["entries"] as? Int == 0)
  }

  @Test func usageErrorsExit64AndHelpExplains() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let help = try await kernel.run(["--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("--profile") && help.stdout.contains("KERNEL_PROFILE"))
    #expect(try await kernel.run(["movies", "top-grossing"]).status == 64)
    #expect(try await kernel.run(["movies", "top-grossing", "--year", "twenty"]).status == 64)
    #expect(try await kernel.run(["movies", "get"]).status == 64)
    let format = try await kernel.run(["movies", "get", "1"], variables: ["KERNEL_FORMAT": "xml"])
    #expect(format.status == 64)
    #expect(format.stderr.contains("KERNEL_FORMAT"))
  }
}

extension CommandsTests {
  @Test func moviesGetShowsWhatItHadAndNamesTheRest() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(["--profile", "api", "movies", "get", "1", "999", "2"])
    #expect(run.status == 66, "\(run)")
    #expect(run.stdout.contains("Finding Dory") && run.stdout.contains("2 movies from the api"))
    #expect(
      run.stderr.hasPrefix("Movie 999 could not be had, the other 2 are shown: ")
        && run.stderr.contains("HTTP 404"), "\(run)")
    // JSON names the ids it could not have, for a script.
    let json = try await kernel.run(
      ["--profile", "api", "movies", "get", "1", "999", "2", "998", "--format", "json"])
    #expect(json.status == 66, "\(json)")
    #expect(json.json?["missing"] as? [Int] == [998, 999], "\(json)")
    #expect((json.json?["movies"] as? [Any])?.count == 2, "\(json)")
    let none = try await kernel.run(["--profile", "api", "movies", "get", "998", "999"])
    #expect(none.status == 66 && none.stdout.isEmpty, "\(none)")
    #expect(none.stderr.hasPrefix("No movie could be had: "), "\(none)")
  }
}
