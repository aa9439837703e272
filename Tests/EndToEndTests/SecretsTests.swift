import Foundation
import KernelTesting
import Testing

/// Where the token may be (the context file, 0600, in a 0700 data dir) and everywhere it must
/// not: stdout and stderr of every command, with `--verbose`, over a run that refreshes it.
@Suite(.timeLimit(.minutes(2))) struct SecretsTests {
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
    #expect(movies.stderr.contains("retried now (authRefresh)"), "\(movies)")
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
    let variables = ["KERNEL_BASE_URL": "http://reader:hunter2@127.0.0.1:9/api/"]
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
    let tokens = context?["tokens"] as? [String: [String: Any]]
    let origin = baseURL.replacingOccurrences(of: "/api/", with: "")
    let local = tokens?[origin]
    guard let secret = local?["secret"] as? String, !secret.isEmpty else {
      throw TestFailure("no token saved for local in \(String(decoding: data, as: UTF8.self))")
    }
    return secret
  }
}
