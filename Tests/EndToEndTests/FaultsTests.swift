import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Processes dying at the worst moment: the server in the middle of a run, `kernel` in the
/// middle of storing, and two `kernel`s writing one cache at once.
@Suite(.timeLimit(.minutes(5))) struct FaultsTests {
  /// With the api down, each of 500 ids ran its own retry schedule: 38 s to fail. Once one
  /// request has found the origin unreachable, the rest fail at once, and the layered profile
  /// still answers from the cache what it holds.
  @Test func manyIdsAgainstAServerThatIsDownFailFast() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel)
    let local = ["--environment", "local", "--base-url", server.baseURL]
    _ = try await kernel.run(local + ["movies", "get", "1", "2"])
    await server.stop()
    let ids = (1...500).map(String.init)
    let api = try await kernel.run(
      ["--profile", "api"] + local + ["movies", "get"] + ids, within: .seconds(15))
    #expect(api.status == 69, "\(api.stderr.prefix(400))")
    #expect(api.stderr.contains("No movie could be had"), "\(api.stderr.prefix(400))")
    let layered = try await kernel.run(
      local + ["movies", "get", "--format", "json"] + ids, within: .seconds(15))
    #expect(layered.status == 69, "\(layered.stderr.prefix(400))")
    #expect(layered.movieNames.count == 2, "\(layered.stdout.prefix(400))")
  }

  @Test func aServerKilledMidRunLeavesTheCachedMoviesAndNamesTheOthers() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--latency", "200"])
    let local = ["--environment", "local", "--base-url", server.baseURL]
    let seeded = try await kernel.run(local + ["movies", "get", "1", "2", "3", "4", "5"])
    #expect(seeded.status == 0, "\(seeded)")

    // One at a time, 200 ms each: cached 1, then uncached 6-20, then cached 2-5. The kill comes
    // after the first answer; whenever it lands, 2-5 are asked after it.
    let order = [1] + Array(6...20) + [2, 3, 4, 5]
    let running = try await kernel.launch(
      ["-v"] + local + ["movies", "get"] + order.map(String.init)
        + ["--concurrency", "1", "--format", "json"],
      variables: ["KERNEL_RETRY_MAX_RETRIES": "0"])
    #expect(await running.stderr.wait(for: "→ 200", limit: .seconds(30)))
    await server.kill()
    let run = try await running.finish(within: .seconds(60))

    #expect(run.status == 69, "\(run)")
    #expect(run.json?["origin"] as? String == "mixed", "\(run)")
    let ids = (run.json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int } ?? []
    // Every cached movie, and the uncached ones the api answered before it died, in order.
    #expect(Set([1, 2, 3, 4, 5]).isSubset(of: ids) && ids.count < order.count, "\(run)")
    #expect(ids == order.filter(ids.contains), "\(run)")
    let missing = order.filter { !ids.contains($0) }
    let sentence = run.stderr.split(separator: "\n").last.map(String.init) ?? ""
    #expect(
      sentence.hasPrefix("\(missing.count) of the 20 movies asked for (")
        && sentence.contains(" could not be had, the other \(ids.count) are shown")
        || sentence.hasPrefix("Movie \(missing.first ?? 0) could not be had, the other 19 are"),
      "\(run)")
    #expect(sentence.contains("could not reach 127.0.0.1"), "\(run)")
    #expect(try await kernel.integrityCheck() == "ok")
  }

  @Test func aKernelKilledWhileStoringLeavesACacheTheNextRunOpens() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--extra-movies", "2000"])
    defer { server.terminate() }
    let local = ["--environment", "local", "--base-url", server.baseURL]
    #expect(try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"]).status == 0)

    let running = try await kernel.launch(
      ["-v"] + local + ["movies", "get"] + (1...2000).map(String.init) + ["--concurrency", "16"])
    #expect(await running.stderr.wait(for: "→ 200", count: 200, limit: .seconds(60)))
    running.process.send(SIGKILL)
    _ = try await running.finish(within: .seconds(10))
    #expect(running.process.terminationReason == .uncaughtSignal)

    let offline = try await kernel.run(
      local + [
        "--profile", "offline", "movies", "top-grossing", "--year", "2016", "--format", "json",
      ])
    #expect(offline.movieNames == ProfilesTests.tenOf2016, "\(offline)")
    let again = try await kernel.run(local + ["movies", "get", "1", "1999", "2000"])
    #expect(again.status == 0, "\(again)")
    #expect(try await kernel.integrityCheck() == "ok")
  }

  @Test func twoKernelsWritingOneCacheBothSucceedAndNothingIsLost() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--extra-movies", "600"])
    defer { server.terminate() }
    let local = ["--environment", "local", "--base-url", server.baseURL]
    // Both start on an empty data dir: they also race to create and migrate the database.
    var halves: [BuiltCommand.Running] = []
    for ids in [1...300, 301...600] {
      halves.append(
        try await kernel.launch(
          local + ["movies", "get"] + ids.map(String.init) + ["--format", "json"]))
    }
    var movies = 0
    var warnings = ""
    for half in halves {
      let run = try await half.finish(within: .seconds(90))
      #expect(run.status == 0, "\(run.stderr)")
      movies += run.movieNames.count
      warnings += run.stderr
    }
    #expect(movies == 600)
    // Both stored what they fetched: neither warned that its cache could not be used.
    #expect(warnings.isEmpty, "\(warnings)")

    let offline = try await kernel.run(
      local + ["--profile", "offline", "movies", "get"] + (1...600).map(String.init) + [
        "--format", "json",
      ])
    #expect(offline.status == 0, "\(offline.stderr)")
    let ids = (offline.json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
    #expect(ids == Array(1...600))
    #expect(try await kernel.integrityCheck() == "ok")
  }
}
