import Foundation
import KernelTesting
import Testing

/// The built `kernel` over each profile, against `kernel serve` where the api is real.
@Suite(.timeLimit(.minutes(5))) struct ProfilesTests {
  static let tenOf2016 = [
    "Rogue One: A Star Wars Story", "Finding Dory", "Captain America: Civil War",
    "The Secret Life of Pets", "The Jungle Book", "Deadpool", "Zootopia",
    "Batman v Superman: Dawn of Justice", "Suicide Squad", "Doctor Strange",
  ]

  @Test func layeredAnswersWithNoNetworkThenOfflineAnswersTheSameFromTheCache() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let layered = try await kernel.run(["movies", "top-grossing", "--year", "2016"])
    #expect(layered.status == 0, "\(layered)")
    #expect(layered.stdout.contains("1  Rogue One: A Star Wars Story"))
    #expect(layered.stdout.contains("532,177,324"))
    #expect(layered.stdout.contains("10 movies from the api in"))

    let offline = try await kernel.run([
      "--profile", "offline", "movies", "top-grossing", "--year", "2016",
    ])
    #expect(offline.status == 0, "\(offline)")
    #expect(offline.stdout.contains("10 movies from cache, "))
    let json = try await kernel.run(
      ["movies", "top-grossing", "--year", "2016", "--profile", "offline", "--format", "json"])
    #expect(json.json?["origin"] as? String == "cache")
    #expect(json.movieNames == Self.tenOf2016)
    let first = (json.json?["movies"] as? [[String: Any]])?.first
    #expect(first?["id"] as? Int == 2 && first?["year"] as? Int == 2016)
    #expect(first?["releaseDate"] as? String == "2016-12-16")
    #expect(first?["grossing"] as? Int == 532_177_324)
    #expect((first?["cast"] as? [[String: Any]])?.first?["name"] as? String == "Felicity Jones")
  }

  @Test func theApiProfileReachesKernelServeAndFailsWith69WhenItStops() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel)
    let local = ["--profile", "api", "--environment", "local", "--base-url", server.baseURL]
    let api = try await kernel.run(
      local + ["movies", "top-grossing", "--year", "2016", "--format", "json"])
    #expect(api.status == 0, "\(api)")
    #expect(api.json?["origin"] as? String == "network")
    #expect(api.movieNames == Self.tenOf2016)
    let summary = await server.stop()
    #expect(summary.contains("answered 1 request,"))

    let down = try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"])
    #expect(down.status == 69, "\(down)")
    #expect(down.stderr.contains("could not reach 127.0.0.1"))
    #expect(down.stderr.split(separator: "\n").count == 1)
    #expect(down.stdout.isEmpty)
  }

  #if os(Linux)
    /// libcurl is opened when the first request is made, never linked: the dynamic loader's
    /// own account (`LD_DEBUG=files`) shows it loaded by the api profile and not by the
    /// offline one, and `ldd` finds neither it nor FoundationNetworking in the binary.
    @Test func libcurlIsOpenedByTheFirstRequestAndNeverLinked() async throws {
      let kernel = try Kernel()
      defer { kernel.cleanUp() }
      let ldd = try await kernel.shell("ldd \"$KERNEL\"")
      #expect(ldd.status == 0, "\(ldd)")
      #expect(ldd.stdout.contains("libc.so"), "\(ldd)")
      #expect(!ldd.stdout.contains("libcurl") && !ldd.stdout.contains("FoundationNetworking"))

      let server = try await Server(kernel)
      defer { server.terminate() }
      let loader = ["LD_DEBUG": "files"]
      let api = try await kernel.run(
        ["--profile", "api", "--environment", "local", "--base-url", server.baseURL]
          + ["movies", "top-grossing", "--year", "2016"], variables: loader)
      #expect(api.status == 0, "\(api)")
      #expect(api.stderr.contains("file=libcurl.so.4 [0];  dynamically loaded by"))
      // The default profile's sample environment answers in process: no libcurl either.
      let sample = try await kernel.run(
        ["movies", "top-grossing", "--year", "2016"], variables: loader)
      #expect(sample.status == 0, "\(sample)")
      let offline = try await kernel.run(
        ["--profile", "offline", "movies", "top-grossing", "--year", "2016"], variables: loader)
      #expect(offline.status == 0, "\(offline)")
      for run in [sample, offline] {
        #expect(run.stderr.contains("file=libsqlite3.so.0"), "\(run.stderr.prefix(300))")
        #expect(!run.stderr.contains("libcurl"))
      }
    }
  #endif

  /// `-v` tells where a run's time went, phase by phase, from `main` on; without it, nothing.
  @Test func verboseRunsNameTheirPhasesAndTheirTimes() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let fill = try await kernel.run(["movies", "top-grossing", "--year", "2016"])
    #expect(fill.status == 0, "\(fill)")
    let offline = ["--profile", "offline", "movies", "top-grossing", "--year", "2016"]
    let verbose = try await kernel.run(["-v"] + offline + ["--format", "json"])
    #expect(verbose.status == 0, "\(verbose)")
    let line = try #require(verbose.stderr.split(separator: "\n").first { $0.contains("phases: ") })
    let phases = line.split(separator: "phases: ").last.map(String.init) ?? ""
    let names = phases.split(separator: ";").first?.split(separator: ",").map {
      $0.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init) ?? ""
    }
    #expect(
      names == ["app", "arguments", "config", "container", "service", "answer", "output"],
      "\(line)")
    #expect(phases.hasSuffix(" ms since main"), "\(line)")
    #expect(verbose.json?["origin"] as? String == "cache")
    let quiet = try await kernel.run(offline)
    #expect(quiet.status == 0 && quiet.stderr.isEmpty, "\(quiet)")
  }

  @Test func layeredFallsBackToTheCacheWhenTheServerIsGoneAndSaysSo() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel)
    let local = ["--environment", "local", "--base-url", server.baseURL]
    let fresh = try await kernel.run(local + ["movies", "top-rated", "--year", "2016"])
    #expect(fresh.stdout.contains("from the api in"), "\(fresh)")
    await server.kill()

    let cached = try await kernel.run(local + ["movies", "top-rated", "--year", "2016"])
    #expect(cached.status == 0, "\(cached)")
    #expect(cached.stdout.contains("10 movies from cache, "))
    let nothing = try await kernel.run(local + ["movies", "top-rated", "--year", "2015"])
    #expect(nothing.status == 69, "\(nothing)")
    #expect(nothing.stderr.contains("127.0.0.1"))
  }

  @Test func moviesGetFetchesSeveralInOrderWithNoProgressWhenPiped() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run([
      "movies", "get", "3", "1", "12", "--format", "json", "--concurrency", "2",
    ])
    #expect(run.status == 0, "\(run)")
    #expect(run.movieNames.first == "Captain America: Civil War")
    #expect(run.movieNames.dropFirst().first == "Finding Dory")
    #expect(run.movieNames.count == 3)
    #expect(run.stderr.isEmpty)
  }

  @Test func theOfflineProfileWithNothingCachedExits69WithOneSentence() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run([
      "--profile", "offline", "movies", "top-rated", "--year", "2016",
    ])
    #expect(run.status == 69)
    #expect(run.stderr.hasPrefix("Nothing is cached for the top-rated movies of 2016"))
    #expect(run.stderr.split(separator: "\n").count == 1)
  }

  /// Answers stored from one api (the in-process sample) and an offline run under another
  /// environment: the sentence says the cache holds only the other api's answers and names the
  /// option that chooses it; under the sample environment the same run answers.
  @Test func anOfflineMissSaysWhichApiTheCacheHoldsAnswersOf() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let stored = try await kernel.run(["--environment", "sample", "movies", "get", "3"])
    #expect(stored.status == 0, "\(stored)")
    for command in [["movies", "get", "3"], ["movies", "top-rated", "--year", "2016"]] {
      let elsewhere = try await kernel.run(
        ["--profile", "offline", "--environment", "local"] + command)
      #expect(elsewhere.status == 69, "\(elsewhere)")
      #expect(elsewhere.stderr.split(separator: "\n").count == 1, "\(elsewhere)")
      #expect(
        elsewhere.stderr.hasSuffix(
          "; the cache holds nothing of the api in use, local (http://127.0.0.1:8080/api/), only"
            + " another api's answers (--environment sample chooses it).\n"), "\(elsewhere)")
    }
    let here = try await kernel.run(
      ["--profile", "offline", "--environment", "sample", "movies", "get", "3"])
    #expect(here.status == 0, "\(here)")
    // A miss where the api in use has answers stored says only what it always says.
    let other = try await kernel.run(
      ["--profile", "offline", "--environment", "sample", "movies", "get", "4"])
    #expect(other.status == 69, "\(other)")
    #expect(!other.stderr.contains("the cache holds nothing"), "\(other)")
  }
}
