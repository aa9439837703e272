import Foundation
import KernelTesting
import Testing

/// Where the token may be (the context file, 0600, in a 0700 data dir) and everywhere it must
/// not: stdout and stderr of every command, with `--verbose`, over a run that refreshes it.
@Suite(.timeLimit(.minutes(5))) struct SecretsTests {
  @Test func theTokenAppearsNowhereButTheContextFile() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let first = try await Server(kernel, ["--require-auth"])
    let login = try await kernel.run(
      ["-v", "--environment", "local", "--base-url", first.baseURL, "auth", "login"])
    #expect(login.status == 0, "\(login)")
    let firstToken = try savedToken(kernel, for: first.baseURL)
    await first.stop()

    // A new server knows no token: the first request gets a 401 and the token is refreshed.
    let second = try await Server(kernel, ["--require-auth"])
    let local = ["-v", "--environment", "local", "--base-url", second.baseURL]
    let movies = try await kernel.run(local + ["movies", "top-grossing", "--year", "2016"])
    #expect(movies.status == 0, "\(movies)")
    #expect(movies.stderr.contains("→ 401"), "\(movies)")
    #expect(movies.stderr.contains("retried now (authentication)"), "\(movies)")
    #expect(movies.stderr.contains("Authorization: <redacted>"), "\(movies)")
    let secondToken = try savedToken(kernel, for: second.baseURL)
    #expect(secondToken != firstToken)
    var runs = [login, movies]
    for command in [
      ["auth", "status"], ["auth", "status", "--format", "json"], ["config", "show"],
      ["config", "show", "--format", "json"], ["env", "list"], ["doctor"],
      ["movies", "get", "1", "2", "3"],
    ] {
      runs.append(try await kernel.run(local + command))
    }
    #expect(runs.allSatisfy { $0.status == 0 }, "\(runs.filter { $0.status != 0 })")
    for run in runs {
      for token in [firstToken, secondToken] {
        #expect(!run.stdout.contains(token) && !run.stderr.contains(token), "\(run)")
      }
    }
    #expect(await second.stop().contains("1 to auth"))

    let manager = FileManager.default
    let folder = try manager.attributesOfItem(atPath: kernel.dataDirectory.path)
    let file = try manager.attributesOfItem(
      atPath: kernel.dataDirectory.appendingPathComponent("context.json").path)
    #expect((folder[.posixPermissions] as? Int) == 0o700)
    #expect((file[.posixPermissions] as? Int) == 0o600)
  }

  @Test func aPasswordInTheBaseURLIsRedacted() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let variables = [
      "KERNEL_BASE_URL": "http://reader:hunter2@127.0.0.1:9/api/",
      "KERNEL_ENVIRONMENTS_LOCAL_AUTH": "basic",
    ]
    let show = try await kernel.run(
      ["--environment", "local", "config", "show"], variables: variables)
    #expect(show.status == 0, "\(show)")
    #expect(show.stdout.contains("127.0.0.1:9/api/"), "\(show)")
    let failed = try await kernel.run(
      ["-v", "--profile", "api", "--environment", "local", "movies", "get", "1"],
      variables: variables)
    #expect(failed.status == 69, "\(failed)")
    // The user and password go as Basic authorization, redacted like every credential.
    #expect(failed.stderr.contains("GET http://127.0.0.1:9/api/movies/1 ["), "\(failed)")
    #expect(failed.stderr.contains("Authorization: <redacted>"), "\(failed)")
    for run in [show, failed] {
      #expect(!run.stdout.contains("hunter2") && !run.stderr.contains("hunter2"), "\(run)")
    }
  }

  /// The token saved for the origin of `baseURL` (`http://127.0.0.1:PORT`): tokens are kept by
  /// the origin they were issued for.
  private func savedToken(_ kernel: Kernel, for baseURL: String) throws -> String {
    let data = try Data(contentsOf: kernel.dataDirectory.appendingPathComponent("context.json"))
    let context = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let credentials = context?["credentials"] as? [String: [String: Any]]
    let origin = baseURL.replacingOccurrences(of: "/api/", with: "")
    let local = credentials?[origin]?["value"] as? [String: Any]
    guard let secret = local?["secret"] as? String, !secret.isEmpty else {
      throw TestFailure("no token saved for local in \(String(decoding: data, as: UTF8.self))")
    }
    return secret
  }

  /// A token as a base URL's user name, a password in one that does not parse, and a key in
  /// its query: none of them is printed by any command, whatever it shows of the URL.
  @Test func secretsInABaseURLAreNeverPrinted() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try kernel.write(
      """
      profile: api
      profiles: {api: {movies: [api]}}
      environment: keyed
      environments:
        keyed: {baseURL: "http://ghp_s3cret1@127.0.0.1:9/api/", auth: basic}
        tokened: {baseURL: "http://u:hunter2@127.0.0.1:9/api/", auth: basic, tokenHeader: X-Custom, tokenScheme: ""}
      """, to: "Config/kernel.yaml")
    var runs: [BuiltCommand.Run] = []
    for command in [
      ["config", "show"], ["config", "show", "--format", "json"], ["env", "list"],
      ["env", "use", "tokened"], ["-v", "--profile", "api", "movies", "get", "1"],
    ] {
      runs.append(try await kernel.run(command))
    }
    let query = try await kernel.run([
      "-v", "--profile", "api", "--base-url", "http://127.0.0.1:9/api/?api_key=s3cret2", "movies",
      "get", "1",
    ])
    #expect(query.status == 78 && query.stderr.contains("has a query"), "\(query)")
    runs.append(query)
    let unparsed = try await kernel.run([
      "--profile", "api", "--base-url", "http://user:s3cret3@bad host/api/", "movies", "get", "1",
    ])
    #expect(unparsed.status == 78, "\(unparsed)")
    runs.append(unparsed)
    for run in runs {
      for secret in ["ghp_s3cret1", "hunter2", "s3cret2", "s3cret3"] {
        #expect(!run.stdout.contains(secret) && !run.stderr.contains(secret), "\(run)")
      }
    }
    #expect(runs[2].stdout.contains("http://REDACTED@127.0.0.1:9/api/"), "\(runs[2])")
  }

  /// The environment's own token header is secret by declaration, whatever it is called.
  @Test func anOrdinaryTokenHeaderNameIsRedactedInTheDebugLog() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--require-auth"])
    try kernel.write(
      """
      profile: api
      profiles: {api: {movies: [api]}}
      environment: local
      environments:
        local: {baseURL: "\(server.baseURL)", auth: plainToken, tokenHeader: X-Custom, tokenScheme: ""}
      """, to: "Config/kernel.yaml")
    let login = try await kernel.run(["--profile", "api", "auth", "login"])
    let movies = try await kernel.run(["-v", "--profile", "api", "movies", "get", "1"])
    await server.stop()
    #expect(login.status == 0, "\(login)")
    let context = try String(
      contentsOf: kernel.dataDirectory.appendingPathComponent("context.json"), encoding: .utf8)
    let token = try #require(
      context.split(separator: "\"").first {
        $0.count > 12 && !$0.contains("/") && !$0.contains(":")
      })
    #expect(movies.stderr.contains("X-Custom: <redacted>"), "\(movies)")
    #expect(!movies.stderr.contains(token), "\(movies)")
  }

  /// A context file this user cannot read is left as it is, not moved aside as corrupt (which
  /// dropped the session), and a change to it fails in one sentence.
  @Test func aContextFileThatCannotBeReadIsLeftAsItIs() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let data = kernel.home.appendingPathComponent("shared-data")
    _ = try await kernel.run(["--data-dir", data.path, "env", "use", "local"])
    let before = try Data(contentsOf: data.appendingPathComponent("context.json"))
    let run = try await kernel.shell(
      #"""
      chmod 755 "$HOME" "$HOME/work"; chown 65534 "$DATA"
      as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$KERNEL" --data-dir "$DATA" --profile api "$@"; }
      as_nobody env list; echo "list $?"
      as_nobody env use sample; echo "use $?"
      """#, variables: ["DATA": data.path])
    #expect(run.stdout.contains("list 0") && run.stdout.contains("use 78"), "\(run)")
    #expect(
      run.stderr.contains("cannot be read (permission denied); it was left as it is"), "\(run)")
    #expect(!run.stderr.contains("moved"), "\(run)")
    let files = try FileManager.default.contentsOfDirectory(atPath: data.path)
    #expect(files == ["context.json"], "\(files)")
    #expect(try Data(contentsOf: data.appendingPathComponent("context.json")) == before)
  }
}

extension SecretsTests {
  /// A secret given by flag is taken (commas and all) and warned of, since `ps` shows a command
  /// line to every user; its value is printed nowhere.
  @Test func aSecretGivenByFlagIsWarnedOfAndNeverPrinted() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let shown = try await kernel.run(
      ["--environments-local-password", "pa,ss-Secret7", "config", "show"])
    #expect(shown.status == 0, "\(shown)")
    #expect(
      shown.stderr.contains(
        "warning: --environments-local-password puts a secret on the command line"), "\(shown)")
    #expect(shown.stderr.contains("KERNEL_ENVIRONMENTS_LOCAL_PASSWORD"), "\(shown)")
    #expect(!shown.stdout.contains("Secret7") && !shown.stderr.contains("Secret7"), "\(shown)")
    let variable = try await kernel.run(
      ["config", "show"], variables: ["KERNEL_ENVIRONMENTS_LOCAL_PASSWORD": "pa,ss-Secret7"])
    #expect(variable.status == 0 && !variable.stderr.contains("warning"), "\(variable)")
  }
}
