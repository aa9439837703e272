import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// The built `kernel` against what the network and the places it keeps secrets can do wrong: a
/// token pointed at another origin, passwords in URLs, loose permissions, control characters
/// in answers, a server that drips, ports that cannot be had, IPv6 loopback.
@Suite(.timeLimit(.minutes(5))) struct HostileNetworkTests {
  static let token = "origin-a-secret-51c2"

  @Test(arguments: [true, false]) func aSavedTokenNeverGoesToAnotherOrigin(byFlag: Bool)
    async throws
  {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let issuer = try HostileServer { request in
      request.path.hasSuffix("/auth")
        ? .send(status: 200, body: Data(Self.token.utf8)) : .send(status: 404)
    }
    defer { issuer.stop() }
    let other = try HostileServer { _ in .send(status: 404, body: Data("not here".utf8)) }
    defer { other.stop() }
    let login = try await kernel.run(
      ["--environment", "local", "--base-url", issuer.baseURL, "auth", "login"])
    #expect(login.status == 0, "\(login)")
    let elsewhere =
      byFlag
      ? try await kernel.run([
        "--profile", "api", "--environment", "local", "--base-url", other.baseURL, "movies", "get",
        "1",
      ])
      : try await kernel.run(
        ["--profile", "api", "--environment", "local", "movies", "get", "1"],
        variables: ["KERNEL_BASE_URL": other.baseURL])
    #expect(elsewhere.status == 66, "\(elsewhere)")
    #expect(!other.requests.isEmpty)
    for request in other.requests {
      #expect(!request.headers.values.contains { $0.contains(Self.token) }, "\(request)")
    }
  }

  @Test func aPasswordInABaseURLIsRedactedByEnv() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try kernel.write(
      """
      environment: local
      environments:
        local: {baseURL: "http://reader:hunter2@127.0.0.1:8080/api/", auth: basic}
      profiles:
        layered: {movies: [api]}
      """, to: "Config/kernel.yaml")
    for arguments in [
      ["env", "list"], ["env", "list", "--format", "json"], ["env", "use", "local"],
    ] {
      let run = try await kernel.run(arguments)
      #expect(run.status == 0, "\(run)")
      #expect(run.stdout.contains("//REDACTED@127.0.0.1"), "\(run)")
      #expect(!run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"), "\(run)")
    }
  }

  @Test func aLooseDataDirAndContextFileAreTightenedWhenRead() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    #expect(try await kernel.run(["auth", "login"]).status == 0)
    let context = kernel.dataDirectory.appendingPathComponent("context.json").path
    try FileManager.default.setAttributes(
      [.posixPermissions: 0o755], ofItemAtPath: kernel.dataDirectory.path)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: context)
    let status = try await kernel.run(["auth", "status"])
    #expect(status.status == 0, "\(status)")
    func mode(_ path: String) throws -> Int? {
      (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?
        .intValue
    }
    #expect(try mode(kernel.dataDirectory.path) == 0o700)
    #expect(try mode(context) == 0o600)
    #expect(status.stderr.contains("was open to others (755); it is now 0700"), "\(status)")
    #expect(status.stderr.contains("was readable by others (644); it is now 0600"), "\(status)")
  }

  @Test func controlCharactersFromTheNetworkAreEscapedForPeopleAndExactInJSON() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let title = "Evil\u{1B}]0;pwned\u{07}Movie"
    let movie = """
      {"id": 7, "name": "\(title.replacingOccurrences(of: "\u{1B}", with: "\\u001b").replacingOccurrences(of: "\u{07}", with: "\\u0007"))",
       "year": 2016, "releaseDate": "2016-01-01", "grossing": 1, "rating": 5.0, "cast": [{"name": "A\\u009b31mB"}]}
      """
    let server = try HostileServer { request in
      request.path.hasSuffix("/movies/7")
        ? .send(status: 200, body: Data(movie.utf8))
        : .send(status: 500, body: Data("boom \u{1B}[2J cleared".utf8))
    }
    defer { server.stop() }
    let local = ["--environment", "local", "--base-url", server.baseURL]
    let text = try await kernel.run(local + ["movies", "get", "7"])
    #expect(text.status == 0, "\(text)")
    #expect(text.stdout.contains("Evil\\x1B]0;pwned\\x07Movie"), "\(text)")
    #expect(text.stdout.contains("A\\x9B31mB"), "\(text)")
    let json = try await kernel.run(local + ["movies", "get", "7", "--format", "json"])
    #expect(json.movieNames == [title], "\(json)")
    let offline = try await kernel.run(local + ["--profile", "offline", "movies", "get", "7"])
    #expect(offline.stdout.contains("Evil\\x1B]0;pwned\\x07Movie"), "\(offline)")
    let failed = try await kernel.run(local + ["--profile", "api", "movies", "get", "8"])
    #expect(failed.status == 69, "\(failed)")
    #expect(failed.stderr.contains("boom \\x1B[2J cleared"), "\(failed)")
    for run in [text, offline, failed] {
      #expect(
        !(run.stdout + run.stderr).unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{9B}" })
    }
  }

  @Test func aDrippingServerEndsAtTheCallsDeadlineAndLayeredAnswersFromTheCache() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // The first answer is whole, and cached; every later one drips.
    let movie =
      #"{"id": 5, "name": "Deadpool", "year": 2016, "releaseDate": "2016-02-12","#
      + #" "grossing": 363070709, "rating": 65.0, "cast": []}"#
    let answered = Counter()
    let server = try HostileServer { _ in
      answered.increment() == 1
        ? .send(status: 200, body: Data(movie.utf8))
        : .drip(promised: 1 << 20, chunk: Data(" ".utf8), interval: .milliseconds(200))
    }
    defer { server.stop() }
    let local = ["--environment", "local", "--base-url", server.baseURL]
    #expect(try await kernel.run(local + ["movies", "get", "5"]).status == 0)
    let variables = ["KERNEL_TIMEOUTS_CALL_SECONDS": "2"]
    // Each try alone would last its 30 s and be retried: the deadline is the whole call's.
    let api = try await kernel.run(
      local + ["--profile", "api", "movies", "get", "5"], variables: variables,
      within: .seconds(30))
    #expect(api.status == 69, "\(api)")
    #expect(
      api.stderr
        == "No movie could be had: GET movies/5 did not finish within 2 s, retries included; the server is too slow (the limit is timeouts.callSeconds).\n"
    )
    let layered = try await kernel.run(
      local + ["movies", "get", "5"], variables: variables, within: .seconds(30))
    #expect(layered.status == 0, "\(layered)")
    #expect(layered.stdout.contains("from cache"), "\(layered)")
  }

  @Test func servesBindErrorsNameTheReasonAndHostsAreLoopbackOnly() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let first = try await Server(kernel)
    defer { first.terminate() }
    let port = try #require(first.baseURL.split(separator: ":").last?.split(separator: "/").first)
    let taken = try await kernel.run(["serve", "--port", String(port)], within: .seconds(30))
    #expect(taken.status == 69, "\(taken)")
    #expect(
      taken.stderr
        == "kernel serve: The fixture server could not listen on 127.0.0.1 port \(port): Address already in use.\n"
    )
    for host in ["127.evil.example", "10.0.0.1", "::2", "example.com"] {
      let run = try await kernel.run(["serve", "--host", host])
      #expect(run.status == 64, "\(host): \(run)")
      #expect(run.stderr.contains("--host must be a loopback address"), "\(run)")
    }
  }

  @Test func ipv6LoopbackWorksAndABadPortIsAConfigError() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // Linux's URLSession reaches [::1] as `localhost`, which curl may try over IPv4 first: the
    // same port on 127.0.0.1 is held (bound, not listening) so no other test's server is there.
    var held: (server: Server, placeholder: Int32)?
    for _ in 1...5 where held == nil {
      let candidate = try await Server(kernel, ["--host", "::1"])
      let port = UInt16(candidate.baseURL.split(separator: ":").last?.prefix { $0.isNumber } ?? "")
      if let port, let placeholder = Self.holdIPv4(port: port) {
        held = (candidate, placeholder)
      } else {
        await candidate.stop()
      }
    }
    let (server, placeholder) = try #require(held)
    defer {
      server.terminate()
      close(placeholder)
    }
    #expect(server.baseURL.hasPrefix("http://[::1]:"))
    let run = try await kernel.run([
      "--profile", "api", "--environment", "local", "--base-url", server.baseURL, "movies", "get",
      "1",
    ])
    #expect(run.status == 0, "\(run)")
    #expect(run.stdout.contains("Finding Dory"), "\(run)")
    let port = try await kernel.run([
      "--profile", "api", "--base-url", "http://127.0.0.1:99999/api/", "movies", "get", "1",
    ])
    #expect(port.status == 78, "\(port)")
    #expect(
      port.stderr
        == "the command line: --base-url is not usable: http://127.0.0.1:99999/api/ has port 99999;"
        + " a port is 1 to 65535.\n"
    )
  }

  /// A socket bound to 127.0.0.1:`port` and not listening, or nil when the port is taken.
  static func holdIPv4(port: UInt16) -> Int32? {
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard socket >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0 else {
      close(socket)
      return nil
    }
    return socket
  }
}
