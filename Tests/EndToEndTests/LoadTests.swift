import Foundation
import KernelTesting
import Testing

/// A thousand movies through a faulty, slow server whose tokens live two seconds.
@Suite(.timeLimit(.minutes(5))) struct LoadTests {
  @Test func aThousandMoviesArriveThroughFaultsAndExpiringTokens() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    // Every path answers 503 once, every answer waits 50 ms, tokens expire after 2 s.
    let server = try await Server(
      kernel,
      [
        "--extra-movies", "1000", "--fail-first", "1", "--latency", "50", "--require-auth",
        "--token-ttl", "2",
      ])
    let fetch = { (ids: [Int]) async throws -> (BuiltCommand.Run, String) in
      let terminal = try PseudoTerminal()
      let running = try await kernel.launch(
        ["-v", "--environment", "local", "--base-url", server.baseURL, "movies", "get"]
          + ids.map(String.init) + ["--concurrency", "16", "--format", "json"],
        variables: ["KERNEL_RETRY_BASE_DELAY_MS": "20"], terminal: terminal)
      let run = try await running.finish(within: .seconds(150))
      return (run, await onThreadOfItsOwn { terminal.text() })
    }
    // The same 16 requests at once for 16 movies, on the same machine under the same load: what
    // the process holds whatever the count (threads, connections, the runtime).
    let (_, few) = try await fetch(Array(1...16))
    let ids = Array(1...1000)
    let (run, shown) = try await fetch(ids)
    let summary = await server.stop()

    #expect(run.status == 0, "\(shown.suffix(2000))")
    let got = (run.json?["movies"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
    #expect(got == ids)
    // Progress is drawn in place on the terminal.
    #expect(shown.contains("\rmovies: 1/1000") || shown.contains("movies: 1/1000"))
    #expect(shown.contains("movies: 1000/1000"))
    // Memory does not grow with the movies: a thousand take at most 30 MB more than sixteen.
    let peak = try #require(number(in: shown, after: "peak memory "))
    let baseline = try #require(number(in: few, after: "peak memory "))
    #expect(peak > 0 && peak - baseline < 30, "peak memory \(peak) MB, \(baseline) MB for 16")

    // At most 16 movie requests and one token refresh at the server at once; more than
    // URLSession's default of 6 connections per host, which would cap them unseen.
    let atOnce = try #require(number(in: summary, after: "at most "))
    #expect(atOnce > 6 && atOnce <= 17, "\(summary)")
    // One token for the start, and exactly one more for each token that expired (auth's own
    // first answer is a 503 like every path's, so it is asked once more than tokens issued);
    // the sixteen movies' run fetched the first.
    let issued = try #require(number(in: summary, after: "to auth ("))
    let expired = try #require(number(in: summary, after: "once; "))
    #expect(expired >= 2, "\(summary)")
    #expect(issued == expired + 1, "\(summary)")
  }

  /// The whole number right after `marker`, e.g. 42 in "peak memory 42 MB".
  private func number(in text: String, after marker: String) -> Int? {
    guard let range = text.range(of: marker, options: .backwards) else { return nil }
    return Int(text[range.upperBound...].prefix { $0.isNumber })
  }
}
