import Foundation
import KernelTesting
import SampleApi
import Testing

/// The built `kernel` against a server that answers badly on purpose: each answer ends within
/// its timeout, with the contract's exit code and one sentence, leaves the cached copy of the
/// route whole, and never carries the token to another host.
@Suite(.timeLimit(.minutes(5))) struct HostileServerTests {
  static let token = "hostile-secret-7f3a9c0e"
  static let route = "/api/movies/topGrossing/2016"

  /// What the layered profile (cache over api) and, where given, the api profile must do.
  struct Scenario: Sendable, CustomTestStringConvertible {
    let name: String
    /// The answer to the movie route; `elsewhere` is the base URL of a second server on
    /// another loopback host.
    let answer: @Sendable (_ elsewhere: String) -> HostileServer.Answer
    /// Exit code and a fragment of the sentence on stderr; 0 means served from the cache.
    let layered: (Int32, String)
    let api: (Int32, String)?
    var testDescription: String { name }
  }

  static let scenarios: [Scenario] = [
    Scenario(
      name: "invalid JSON",
      answer: { _ in .send(status: 200, body: Data(#"[{"id": 1, "na"#.utf8)) },
      layered: (65, "not valid JSON"), api: nil),
    Scenario(
      name: "a whole number too big for 64 bits",
      answer: { _ in
        .send(status: 200, body: Data(#"[{"id": 99999999999999999999, "name": "Big"}]"#.utf8))
      },
      layered: (65, "[0].id: the number 99999999999999999999 does not fit a 64-bit integer"),
      api: nil),
    Scenario(
      name: "JSON of the wrong shape",
      answer: { _ in .send(status: 200, body: Data(#"{"movies": "none"}"#.utf8)) },
      layered: (65, "expected an array"), api: nil),
    Scenario(
      name: "an empty body", answer: { _ in .send(status: 200) },
      layered: (65, "the body is empty"), api: nil),
    Scenario(
      name: "a 10 MB body",
      answer: { _ in .send(status: 200, body: Data(repeating: UInt8(ascii: "a"), count: 10 << 20))
      },
      layered: (65, "not valid JSON"), api: nil),
    Scenario(
      name: "a body that never ends",
      answer: { _ in
        .drip(promised: 10 << 20, chunk: Data(" ".utf8), interval: .milliseconds(100))
      },
      layered: (0, ""), api: (69, "timed out")),
    Scenario(
      name: "a redirect loop",
      answer: { _ in .send(status: 302, headers: ["Location": HostileServerTests.route]) },
      layered: (65, "redirect"), api: nil),
    Scenario(
      name: "a redirect to another host",
      answer: { elsewhere in
        .send(status: 302, headers: ["Location": elsewhere + "movies/topGrossing/2016"])
      },
      layered: (66, "404"), api: nil),
    Scenario(
      name: "a 401 with WWW-Authenticate: Basic",
      answer: { _ in .send(status: 401, headers: ["WWW-Authenticate": #"Basic realm="api""#]) },
      layered: (77, "credential"), api: nil),
    Scenario(
      name: "Retry-After: 99999",
      answer: { _ in .send(status: 503, headers: ["Retry-After": "99999"]) },
      layered: (0, ""), api: (69, "retry after 99999 s")),
  ]

  @Test(arguments: scenarios) func endsCleanlyAndKeepsTheCache(_ scenario: Scenario) async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // The first answer to the route is the ten of 2016, whole, and cached for this server's
    // origin; every later one is the scenario's.
    let ten = await SampleApiResponder(routes: .sampleMovies()).original(
      SampleRequest(path: Self.route)
    ).body
    let answered = Counter()
    let elsewhere = try HostileServer(host: "127.0.0.2") { _ in
      .send(status: 404, body: Data("not here".utf8))
    }
    defer { elsewhere.stop() }
    let server = try HostileServer { request in
      if request.path.hasSuffix("/auth") { return .send(status: 200, body: Data(Self.token.utf8)) }
      return answered.increment() == 1
        ? .send(status: 200, body: ten) : scenario.answer(elsewhere.baseURL)
    }
    defer { server.stop() }
    let local = ["--environment", "local", "--base-url", server.baseURL]
    let variables = [
      "KERNEL_TIMEOUTS_RESOURCE_SECONDS": "2", "KERNEL_TIMEOUTS_REQUEST_SECONDS": "2",
      "KERNEL_RETRY_MAX_RETRIES": "1", "KERNEL_RETRY_BASE_DELAY_MS": "50",
    ]
    let login = try await kernel.run(local + ["auth", "login"], variables: variables)
    #expect(login.status == 0, "\(login)")
    let seeded = try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"])
    #expect(seeded.status == 0, "\(seeded)")

    var profiles = [("layered", scenario.layered)]
    if let api = scenario.api { profiles.append(("api", api)) }
    for (profile, (code, fragment)) in profiles {
      let run = try await kernel.run(
        local + ["--profile", profile, "movies", "top-grossing", "--year", "2016"],
        variables: variables, within: .seconds(30))
      #expect(run.status == code, "\(profile): \(run)")
      if code == 0 {
        #expect(run.stdout.contains("10 movies from cache"), "\(profile): \(run)")
      } else {
        #expect(run.stdout.isEmpty, "\(profile): \(run)")
        #expect(run.stderr.contains(fragment), "\(profile): \(run)")
        #expect(run.stderr.split(separator: "\n").count == 1, "\(profile): \(run)")
        #expect(run.stderr.count < 400, "\(profile): \(run)")
      }
    }

    let movieRequests = server.requests.filter { $0.path == Self.route }
    #expect(!movieRequests.isEmpty)
    #expect(movieRequests.allSatisfy { $0.headers["authorization"] == "Bearer \(Self.token)" })
    for request in elsewhere.requests {
      #expect(!request.headers.values.contains { $0.contains(Self.token) }, "\(request)")
    }

    let offline = try await kernel.run(
      local + [
        "--profile", "offline", "movies", "top-grossing", "--year", "2016", "--format", "json",
      ])
    #expect(offline.movieNames == ProfilesTests.tenOf2016, "\(offline)")
    #expect(try await kernel.integrityCheck() == "ok")
  }

  @Test func aRedirectToAnotherHostIsFollowedWithoutTheToken() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let elsewhere = try HostileServer(host: "127.0.0.2") { _ in
      .send(status: 404, body: Data("not here".utf8))
    }
    defer { elsewhere.stop() }
    let server = try HostileServer { request in
      request.path.hasSuffix("/auth")
        ? .send(status: 200, body: Data(Self.token.utf8))
        : .send(status: 307, headers: ["Location": elsewhere.baseURL + "movies/1"])
    }
    defer { server.stop() }
    let local = ["--profile", "api", "--environment", "local", "--base-url", server.baseURL]
    #expect(try await kernel.run(local + ["auth", "login"]).status == 0)
    let run = try await kernel.run(local + ["movies", "get", "1"])
    #expect(run.status == 66, "\(run)")
    #expect(server.requests.contains { $0.headers["authorization"] == "Bearer \(Self.token)" })
    #expect(elsewhere.requests.map(\.path) == ["/api/movies/1"])
    #expect(elsewhere.requests.allSatisfy { $0.headers["authorization"] == nil })
  }
}
