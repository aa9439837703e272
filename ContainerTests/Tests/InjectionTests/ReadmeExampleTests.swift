import Foundation
import KernelTesting
import Testing

@testable import Injection

// The README's container example, verbatim between the snippet markers (KernelTesting's
// `Snippets` checks that the README's copy equals this one), so the README cannot drift from
// what compiles and runs; what it prints is compared with what the README says it prints.

protocol MovieService: Sendable {
  func title(of id: Int) async throws -> String
}

struct ApiMovieService: MovieService {
  let baseURL: String
  func title(of id: Int) async throws -> String { "movie \(id) from \(baseURL)" }
}

struct LoggingMovieService: MovieService {
  let base: any MovieService
  func title(of id: Int) async throws -> String { "logged " + (try await base.title(of: id)) }
}

struct FakeMovieService: MovieService {
  func title(of id: Int) async throws -> String { "fake \(id)" }
}

@Suite struct ReadmeExampleTests {
  @Test func theReadmeExampleRunsAsDocumented() async throws {
    let output = PrintedLines()
    func print(_ text: String) { output.print(text) }
    // snippet: container
    let container = Container()
    try container.register(String.self, tag: "baseURL") { _ in "http://127.0.0.1:8080/api/" }
    try container.register((any MovieService).self, scope: .singleton) { r in
      ApiMovieService(baseURL: try r.resolve(tag: "baseURL"))
    }
    try container.decorate((any MovieService).self) { _, base in LoggingMovieService(base: base) }
    try container.validate()  // every registration resolves, or one error lists every failure
    try container.bootstrap()  // eager singletons made; registrations frozen; lookups lock-free

    let movies: any MovieService = try container.resolve()
    print(try await movies.title(of: 1))  // logged movie 1 from http://127.0.0.1:8080/api/

    // In a test: override one part in a child, keep the rest.
    let test = container.child()
    try test.register((any MovieService).self) { _ in FakeMovieService() }
    print(try await test.resolve((any MovieService).self).title(of: 1))  // fake 1
    print(container.graph.rendered(as: .text))
    // MovieService [singleton, 1 decorator(s)]
    // └─ String tagged "baseURL" [shared]
    // end snippet
    // ContainerTests is a package inside Kernel's: the README is one folder up.
    let kernel = Snippets.repositoryRoot().deletingLastPathComponent()
    let readme = try Snippets(document: kernel.appendingPathComponent("README.md"))
    #expect(output.all == Snippets.expectedOutput(of: try #require(readme.samples["container"])))

    #expect(try await movies.title(of: 1) == "logged movie 1 from http://127.0.0.1:8080/api/")
    #expect(try await test.resolve((any MovieService).self).title(of: 1) == "fake 1")
    #expect(
      container.graph.rendered(as: .text) == """
        MovieService [singleton, 1 decorator(s)]
        └─ String tagged "baseURL" [shared]
        """)
  }
}
