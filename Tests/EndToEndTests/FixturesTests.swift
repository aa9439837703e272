import Foundation
import KernelTesting
import Testing

/// `kernel serve --fixtures DIR` serving the books example's folder, with its faults applying
/// to those routes as to the movie API's.
@Suite(.timeLimit(.minutes(5))) struct FixturesTests {
  static let folder = Snippets.repositoryRoot().appendingPathComponent("Examples/Books/Fixtures")

  private func get(_ server: Server, _ path: String, token: String? = nil) async throws
    -> (status: Int, body: String)
  {
    let url = try #require(URL(string: server.baseURL + path))
    let response = try await fetch(
      url, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
    return (response.status, String(decoding: response.body, as: UTF8.self))
  }

  @Test func theExamplesFixturesAreServedWithLatencyFailFirstAndRequiredAuth() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(
      kernel,
      ["--fixtures", Self.folder.path, "--latency", "20", "--fail-first", "1", "--require-auth"])
    defer { server.terminate() }
    let clock = ContinuousClock()
    let start = clock.now
    #expect(try await get(server, "books/1").status == 503)  // the path's first request
    // Held back by the latency: an answer never comes sooner.
    #expect(clock.now - start >= .milliseconds(20))
    #expect(try await get(server, "books/1").status == 401)  // no token
    #expect(try await get(server, "auth").status == 503)  // auth's own first request
    let token = try await get(server, "auth")
    #expect(token.status == 200 && !token.body.isEmpty)
    let dune = try await get(server, "books/1", token: token.body)
    #expect(dune.status == 200, "\(dune)")
    #expect(dune.body.contains(#""title": "Dune""#))
    #expect(try await get(server, "books", token: token.body).status == 503)  // every path's first
    let shelf = try await get(server, "books", token: token.body)
    #expect(shelf.body.contains("Emma") && shelf.body.contains(#""next_page": 2"#))
    let missing = try await get(server, "books/9", token: token.body)
    #expect(missing.status == 503)
    let again = try await get(server, "books/9", token: token.body)
    #expect(again.status == 404 && again.body == #"{"error":"no route answers GET /api/books/9"}"#)
    let summary = await server.stop()
    #expect(summary.contains("answered 9 requests, 2 to auth (1 token issued)"), "\(summary)")
  }

  /// A script reads what `serve` serves and, on stop, what it answered, as JSON lines.
  @Test func withFormatJSONItSaysItsBaseURLAndItsSummaryAsJSONLines() async throws {
    struct Started: Decodable { let baseURL, serving: String }
    struct Summary: Decodable { let requests, authRequests, mostAtOnce: Int }
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--fixtures", Self.folder.path, "--format", "json"])
    defer { server.terminate() }
    let started = try JSONDecoder().decode(Started.self, from: Data(server.firstLine.utf8))
    #expect(
      started.baseURL == server.baseURL && started.serving.hasSuffix("Examples/Books/Fixtures"))
    #expect(try await get(server, "books/1").status == 200)
    #expect(try await get(server, "auth").status == 200)
    // The summary is not said on stderr too (a warning of the server's own may be, under load).
    let errors = await server.stop()
    #expect(!errors.contains("answered"), "\(errors)")
    let lines = await server.output().split(separator: "\n")
    #expect(lines.count == 1, "\(lines)")
    let summary = try JSONDecoder().decode(Summary.self, from: Data((lines.first ?? "").utf8))
    #expect(summary.requests == 2 && summary.authRequests == 1 && summary.mostAtOnce == 1)
    let wrong = try await kernel.run(["serve", "--port", "0", "--format", "dot"])
    #expect(wrong.status == 64, "\(wrong)")
    #expect(wrong.stderr.contains("--format dot is not a format of this command"), "\(wrong)")
  }

  @Test func aFolderThatCannotBeServedIsAUsageErrorNamingTheFile() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try kernel.write(#"{"id": 1"#, to: "fixtures/api/books/1.json")
    let broken = try await kernel.run(["serve", "--port", "0", "--fixtures", "fixtures"])
    #expect(broken.status == 64, "\(broken)")
    #expect(
      broken.stderr.hasSuffix(
        "fixtures/api/books/1.json cannot be served: it does not hold JSON.\n"),
      "\(broken)")
    let missing = try await kernel.run(["serve", "--port", "0", "--fixtures", "nowhere"])
    #expect(
      missing.status == 64 && missing.stderr.contains("nowhere cannot be served"), "\(missing)")
    let mixed = try await kernel.run(
      ["serve", "--fixtures", Self.folder.path, "--extra-movies", "5"])
    #expect(mixed.status == 64 && mixed.stderr.contains("not to fixtures"), "\(mixed)")
  }
}
