import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// Where a slow answer's time went, end to end with the built `kernel`: making room in a cache
/// far over a lowered `cache.maxBytes` is said on stderr, with its time and how many rows
/// went, so the footer's time is not taken for the api's.
@Suite(.timeLimit(.minutes(5))) struct EvictionTimeTests {
  @Test func makingRoomThatTakesASecondOrMoreIsSaidWithItsTime() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let local = ["--environment", "local", "--base-url", server.baseURL.absoluteString]
      let first = try await kernel.run(local + ["movies", "get", "1"])
      #expect(first.status == 0, "\(first)")
      #expect(!first.stderr.contains("Making room"), "\(first)")
      // 25,000 stored answers of another app's life (4 MB), then a budget of 64 KiB: the next
      // answer stored makes room for itself, row by row (2 s in release).
      _ = try await kernel.sqlite3(
        "cache.sqlite",
        """
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 25000)
        INSERT INTO cache_entry (key, storedAt, payload, usedAt)
        SELECT 'filler ' || i, strftime('%s', 'now'), randomblob(100), i FROM n;
        """)
      let run = try await kernel.run(
        local + ["--cache-max-bytes", "65536", "movies", "get", "2"])
      #expect(run.status == 0, "\(run)")
      #expect(run.stdout.contains("1 movie from the api in"), "\(run)")
      let said = run.stderr.split(separator: "\n")
      #expect(said.count == 1, "\(run)")
      let line = try #require(said.first.map(String.init))
      #expect(line.contains("Making room in the cache "), "\(line)")
      #expect(line.contains("cache.sqlite took "), "\(line)")
      let rows = line.firstMatch(of: /s: (\d+) stored rows went to keep it within cache.maxBytes/)
      #expect((rows.flatMap { Int($0.1) } ?? 0) > 20_000, "\(line)")
      #expect(line.hasSuffix("the time shown for this command includes it."), "\(line)")
    }
  }
}
