import Foundation
import KernelTesting
import SampleApi
import Testing

/// OAuth 2.0's password grant end to end: the built `kernel` logs in with a password piped on
/// standard input, then runs movie commands across the access token's expiry. The server runs
/// in this process on a test clock, so the expiry is a step of the clock, not a wait.
@Suite(.timeLimit(.minutes(5))) struct OAuthLoginTests {
  /// The movie service on the api alone, in an environment that logs in to `server` with
  /// `auth`: OAuth 2.0's password grant unless said.
  static func configure(
    _ kernel: Kernel, for server: FixtureServer,
    auth: String = "oauth2(grant: password, clientId: kernel)"
  ) throws {
    try kernel.write(
      """
      profile: api
      profiles: {api: {movies: [api]}}
      environment: local
      environments:
        local: {baseURL: "\(server.baseURL.absoluteString)", auth: "\(auth)"}
      """, to: "Config/kernel.yaml")
  }

  /// The client-credentials grant with the client authenticated by Basic.
  static let clientCredentials =
    "oauth2(grant: clientCredentials, clientId: kernel, clientAuth: basic)"

  /// The client-credentials grant needs no login: the first run gets a token before its first
  /// request, which carries it; never a bare request answered 401 first (a POST's body sent
  /// twice).
  @Test func clientCredentialsGetATokenBeforeTheFirstRequest() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    var oauth = OAuthServer()
    oauth.clientSecret = "s3cret"
    options.oauth = oauth
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server, auth: Self.clientCredentials)
      let run = try await kernel.run(
        ["movies", "get", "2"], variables: ["KERNEL_ENVIRONMENTS_LOCAL_CLIENT_SECRET": "s3cret"])
      #expect(run.status == 0, "\(run)")
      #expect(server.responder.grants("client_credentials") == 1)
      #expect(server.responder.requests(to: "movies/2") == 1)
    }
  }

  @Test func aPipedPasswordLogsInAndMovieCommandsRunAcrossTheTokensExpiry() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.clock = clock
    var oauth = OAuthServer()
    oauth.accessTokenLifetime = .seconds(600)
    options.oauth = oauth
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      let notYet = try await kernel.run(["movies", "get", "1"])
      #expect(notYet.status == 77, "\(notYet)")
      #expect(notYet.stderr.contains("log in first (auth login)"), "\(notYet)")

      let nobody = try await kernel.run(["auth", "login"])
      #expect(nobody.status == 77, "\(nobody)")
      #expect(
        nobody.stderr
          == "Could not log in to local: the password grant needs a user name and a password"
          + " (auth login --username NAME asks for the password).\n", "\(nobody)")

      let wrong = try await kernel.run(
        ["auth", "login", "--username", "u", "--password-stdin"], input: "nope\n")
      #expect(wrong.status == 77, "\(wrong)")
      #expect(wrong.stderr.split(separator: "\n").count == 1, "\(wrong)")
      #expect(
        wrong.stderr
          == "Could not log in to local: the token endpoint answered invalid_grant (wrong user name or password).\n",
        "\(wrong)")

      let login = try await kernel.run(
        ["auth", "login", "--username", "u", "--password-stdin"], input: "pw\n")
      #expect(login.status == 0, "\(login)")
      #expect(login.stdout.hasPrefix("Logged in to local; the credential is saved in "), "\(login)")
      let status = try await kernel.run(["auth", "status", "--format", "json"])
      #expect(status.json?["loggedIn"] as? Bool == true, "\(status)")
      #expect(status.json?["kind"] as? String == "OAuth 2.0 (password grant)", "\(status)")
      #expect(status.json?["expiresAt"] is String, "\(status)")
      #expect(try await kernel.run(["movies", "get", "1"]).status == 0)

      // Past the expiry on the server's clock: a 401, one refresh, and the replay.
      clock.advance(by: .seconds(601))
      let across = try await kernel.run(["-v", "movies", "get", "2"])
      #expect(across.status == 0, "\(across)")
      #expect(across.stderr.contains("→ 401"), "\(across)")
      #expect(across.stderr.contains("retried now (authentication)"), "\(across)")
      #expect(server.responder.grants("refresh_token") == 1)

      // A refresh token the server no longer knows: one sentence, exit 77, nothing kept.
      server.responder.revokeRefreshTokens()
      clock.advance(by: .seconds(601))
      let revoked = try await kernel.run(["movies", "get", "3"])
      #expect(revoked.status == 77, "\(revoked)")
      #expect(revoked.stderr.contains("log in again"), "\(revoked)")
      let context = try String(
        contentsOf: kernel.dataDirectory.appendingPathComponent("context.json"), encoding: .utf8)
      #expect(!context.contains("refresh-"), "\(context)")
      for run in [wrong, login, status, across, revoked] {
        #expect(!run.stdout.contains("pw\n") && !run.stderr.contains("access-"), "\(run)")
      }
    }
  }
}

extension OAuthLoginTests {
  /// Typed at a terminal, the password is read with echo off: the terminal shows the prompt,
  /// never what was typed.
  @Test func aPasswordTypedAtTheTerminalIsNotEchoed() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    var oauth = OAuthServer()
    oauth.users = ["u": "pw-typed"]
    options.oauth = oauth
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      let terminal = try PseudoTerminal(asInput: true)
      let running = try await kernel.launch(
        ["auth", "login", "--username", "u"], terminal: terminal)
      await onThreadOfItsOwn { terminal.waitUntilShown("Password: ") }
      terminal.type("pw-typed\n")
      let run = try await running.finish(within: .seconds(30))
      let shown = await onThreadOfItsOwn { terminal.text() }
      #expect(run.status == 0, "\(run) \(shown)")
      #expect(shown.hasPrefix("Password: "), "\(shown)")
      #expect(!shown.contains("pw-typed"), "\(shown)")
    }
  }
}

extension OAuthLoginTests {
  /// The cache keeps a signed-in user's answers under their identity: logged out, or as anyone
  /// else, they are not served.
  @Test func aSignedInUsersAnswersServeNoOneElse() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try kernel.write(
        """
        profile: layered
        profiles:
          layered: {movies: ["cache(networkFirst)", api]}
          offline: {movies: [store]}
        environment: local
        environments:
          local: {baseURL: "\(server.baseURL.absoluteString)", auth: "oauth2(grant: password, clientId: kernel)"}
        """, to: "Config/kernel.yaml")
      try await Self.logIn(kernel)
      #expect(try await kernel.run(["movies", "get", "1"]).status == 0)
      let mine = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
      #expect(mine.status == 0 && mine.stdout.contains("Finding Dory"), "\(mine)")
      #expect(try await kernel.run(["auth", "logout"]).status == 0)
      let anyone = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
      #expect(anyone.status == 69 && anyone.stdout.isEmpty, "\(anyone)")
      let stats = try await kernel.run(["cache", "stats"])
      #expect(stats.stdout.contains("answers: 1\n"), "\(stats)")
    }
  }
}

extension OAuthLoginTests {
  /// `auth login` as user `u`, the password piped; it must succeed.
  static func logIn(_ kernel: Kernel) async throws {
    let login = try await kernel.run(
      ["auth", "login", "--username", "u", "--password-stdin"], input: "pw\n")
    #expect(login.status == 0, "\(login)")
  }

  /// A layered profile with an OAuth 2.0 login, its refresh stacks and an outbox.
  static func configureLayered(_ kernel: Kernel, for server: FixtureServer) throws {
    try kernel.write(
      """
      profile: layered
      profiles:
        layered: {movies: ["cache(networkFirst)", outbox, api]}
        offline: {movies: [outbox, store]}
      environment: local
      environments:
        local: {baseURL: "\(server.baseURL.absoluteString)", auth: "oauth2(grant: password, clientId: kernel)"}
      """, to: "Config/kernel.yaml")
  }

  /// The saved access token made to expire on the client's own clock, as time passing would.
  static func expireSavedToken(_ kernel: Kernel) throws {
    let file = kernel.dataDirectory.appendingPathComponent("context.json")
    let text = try String(contentsOf: file, encoding: .utf8)
    let expired = text.replacingOccurrences(
      of: #""expiresAt" : "[^"]*""#, with: #""expiresAt" : "2001-01-01T00:00:00Z""#,
      options: .regularExpression)
    #expect(expired != text, "\(text)")
    try expired.write(to: file, atomically: true, encoding: .utf8)
  }

  /// An expired access token while the api (its token endpoint too) cannot answer: the layered
  /// read answers from the cache and the write is kept, exactly as with a valid token.
  @Test func anExpiredTokenWithTheApiDownAnswersFromTheCacheAndKeepsTheWrite() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configureLayered(kernel, for: server)
      try await Self.logIn(kernel)
      #expect(try await kernel.run(["movies", "get", "1"]).status == 0)
      try Self.expireSavedToken(kernel)
      for pattern in ["/api/oauth/token", "/api/movies/{id}", "/api/movies/{id}/ratings"] {
        for method in ["GET", "POST"] {
          server.handle(method, pattern) { _ in .error(503, "down for maintenance") }
        }
      }
      let read = try await kernel.run(["movies", "get", "1", "--format", "json"])
      #expect(read.status == 0, "\(read)")
      #expect(read.json?["origin"] as? String == "cache", "\(read)")
      let rated = try await kernel.run(["movies", "rate", "1", "80"])
      #expect(rated.status == 0, "\(rated)")
      #expect(rated.stdout.contains("queued"), "\(rated)")
      let status = try await kernel.run(["auth", "status", "--format", "json"])
      #expect(status.json?["loggedIn"] as? Bool == true, "\(status)")
    }
  }

  /// Runs started together after the access token expired, with rotating refresh tokens: one
  /// refresh grant for all of them, every run answered, and the user still logged in.
  @Test(arguments: [2, 10])
  func parallelRunsAfterAnExpiryRefreshOnceAndStayLoggedIn(runs: Int) async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.clock = clock
    var oauth = OAuthServer()
    oauth.rotatesRefreshTokens = true
    options.oauth = oauth
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      try await Self.logIn(kernel)
      try Self.expireSavedToken(kernel)
      clock.advance(by: .seconds(3601))
      let results = try await withThrowingTaskGroup(of: BuiltCommand.Run.self) { group in
        for id in 1...runs {
          // Launched, not run: every one starts at once, whatever else the suite runs.
          group.addTask {
            try await kernel.launch(["movies", "get", "\(id % 5 + 1)"]).finish(within: .seconds(60))
          }
        }
        return try await group.reduce(into: [BuiltCommand.Run]()) { $0.append($1) }
      }
      for run in results { #expect(run.status == 0, "\(run)") }
      #expect(server.responder.grants("refresh_token") == 1)
      let status = try await kernel.run(["auth", "status", "--format", "json"])
      #expect(status.json?["loggedIn"] as? Bool == true, "\(status)")
    }
  }

  /// A logout while another run's refresh is under way (its token endpoint slowed) stays a
  /// logout: the refresh may not store its result over it.
  @Test func aLogoutDuringASlowRefreshStaysLoggedOut() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      try await Self.logIn(kernel)
      try Self.expireSavedToken(kernel)
      let entered = Counter()
      let gate = Counter()
      let responder = server.responder
      server.handle("POST", "/api/oauth/token") { request in
        _ = entered.increment()
        await gate.reach(1)
        return await responder.original(request)
      }
      let read = Task { try await kernel.run(["movies", "get", "1"]) }
      await entered.reach(1)
      let logout = Task { try await kernel.run(["auth", "logout"]) }
      _ = gate.increment()
      let loggedOut = try await logout.value
      #expect(loggedOut.status == 0, "\(loggedOut)")
      _ = try await read.value
      let status = try await kernel.run(["auth", "status", "--format", "json"])
      #expect(status.json?["loggedIn"] as? Bool == false, "\(status)")
    }
  }
}

extension OAuthLoginTests {
  /// Ctrl-C at the `Password:` prompt ends the login (exit 130) with echo back on.
  @Test func anInterruptAtThePasswordPromptPutsEchoBack() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(
      routes: .sampleMovies(),
      options: {
        var o = SampleApiResponder.Options()
        o.oauth = OAuthServer()
        return o
      }()
    ) { server in
      try Self.configure(kernel, for: server)
      let terminal = try PseudoTerminal(asInput: true)
      let running = try await kernel.launch(
        ["auth", "login", "--username", "u"], terminal: terminal)
      await onThreadOfItsOwn { terminal.waitUntilShown("Password: ") }
      #expect(!terminal.echoes())
      running.process.send(SIGINT)
      let run = try await running.finish(within: .seconds(30))
      #expect(run.status == 130, "\(run)")
      #expect(terminal.echoes())
    }
  }

  /// `--password-stdin` reads one line of at most 4 KiB: an endless input is refused at once.
  @Test func anEndlessPipedPasswordIsRefused() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      let run = try await kernel.run(
        ["auth", "login", "--username", "u", "--password-stdin"],
        input: String(repeating: "x", count: 10_000))
      #expect(run.status == 64, "\(run)")
      #expect(run.stderr.contains("longer than 4096 bytes"), "\(run)")
      #expect(server.responder.grants("password") == 0)
    }
  }
}

extension OAuthLoginTests {
  /// An environment whose key or password comes from the config has nothing to log in to, with
  /// or without `--username`: nothing is read from standard input and nothing is stored, so a
  /// key rotated in the config is the one sent.
  @Test(arguments: ["apiKey(header: X-Api-Key)", "basic"])
  func aLoginWhereTheConfigHoldsTheCredentialStoresNothing(auth: String) async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      try kernel.write(
        """
        profile: api
        profiles: {api: {movies: [api]}}
        environment: local
        environments:
          local: {baseURL: "\(server.baseURL.absoluteString)", auth: "\(auth)", apiKey: k-Secret9, username: u, password: p-Secret9}
        """, to: "Config/kernel.yaml")
      let login = try await kernel.run(
        ["auth", "login", "--username", "u", "--password-stdin"], input: "typed\n")
      #expect(login.status == 0, "\(login)")
      #expect(login.stdout.contains("there is nothing to log in to"), "\(login)")
      let context = kernel.dataDirectory.appendingPathComponent("context.json")
      let saved = (try? String(contentsOf: context, encoding: .utf8)) ?? ""
      #expect(!saved.contains("Secret9") && !saved.contains("typed"), "\(saved)")
    }
  }
}

extension OAuthLoginTests {
  /// `clientAuth: basic` with no client secret is refused before anything is sent, naming the
  /// setting and its variable.
  @Test func basicClientAuthWithoutASecretIsRefusedBeforeSending() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server, auth: Self.clientCredentials)
      let run = try await kernel.run(["movies", "get", "1"])
      #expect(run.status == 78, "\(run)")
      #expect(run.stderr.contains("environments.local.clientSecret"), "\(run)")
      #expect(run.stderr.contains("KERNEL_ENVIRONMENTS_LOCAL_CLIENT_SECRET"), "\(run)")
      #expect(server.responder.totalRequests == 0)
    }
  }

  /// A saved credential that cannot be read back is as good as none, and `auth status` says
  /// so; an expired one is said to have expired, not to expire.
  @Test func anUnreadableOrExpiredSavedCredentialIsSaidAsItIs() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var options = SampleApiResponder.Options()
    options.oauth = OAuthServer()
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      try Self.configure(kernel, for: server)
      try await Self.logIn(kernel)
      try Self.expireSavedToken(kernel)
      let expired = try await kernel.run(["auth", "status"])
      #expect(expired.stdout.contains("it expired 2001-01-01"), "\(expired)")

      let file = kernel.dataDirectory.appendingPathComponent("context.json")
      let text = try String(contentsOf: file, encoding: .utf8)
      let broken = text.replacingOccurrences(
        of: #""expiresAt" : "[^"]*""#, with: #""expiresAt" : "-4712-01-01T00:00:00Z""#,
        options: .regularExpression)
      try broken.write(to: file, atomically: true, encoding: .utf8)
      let status = try await kernel.run(["auth", "status", "--format", "json"])
      #expect(status.json?["loggedIn"] as? Bool == false, "\(status)")
      #expect(status.json?["unreadable"] as? Bool == true, "\(status)")
      let said = try await kernel.run(["auth", "status"])
      #expect(said.stdout.contains("cannot be read"), "\(said)")
    }
  }
}
