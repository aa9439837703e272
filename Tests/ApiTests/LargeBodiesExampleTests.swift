import Api
import Domain
import Foundation
import KernelTesting
import SampleApi
import Synchronization
import Testing

/// The `Api` catalog's large-bodies sample, verbatim between the snippet markers, against the sample
/// api on loopback: a poster downloaded with progress, an event stream read as it comes, and a
/// monitor hearing every try with its metrics.
@Suite(.timeLimit(.minutes(1))) struct LargeBodiesExampleTests {
  /// A monitor an app might register: the slowest first byte seen.
  final class SlowestFirstByte: RequestMonitor {
    let slowest = Mutex<Duration>(.zero)
    func requestEnded(_ event: RequestEvent) {
      guard let firstByte = event.metrics?.firstByte else { return }
      slowest.withLock { $0 = max($0, firstByte) }
    }
  }

  @Test func theReadmeSampleDownloadsStreamsAndMeasures() async throws {
    try await withFixtureServer(routes: .sampleMovies(posterBytes: 3_000_000)) { server in
      server.handle("GET", "/api/ratings/live") { _ in
        SampleResponse(
          status: 200, headers: ["Content-Type": "text/event-stream"],
          body: Data("event: rating\ndata: {\"movie\": 3, \"score\": 81}\n\n".utf8))
      }
      let folder = try TemporaryDirectory("large-bodies")
      defer { folder.remove() }
      let context = InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
      let poster = folder.appending("poster.jpg")
      let slowest = SlowestFirstByte()
      let done = Mutex<[TransferProgress]>([])
      let output = PrintedLines()
      func print(_ values: Any...) { output.print(values.map { "\($0)" }.joined(separator: " ")) }
      // snippet: large-bodies
      let client = ApiClient(
        context: context, transport: PlatformTransport(), monitors: [slowest])

      // To a file: streamed to .poster.jpg.partial, moved into place when whole; a cut-short
      // download resumes from there (Range, If-Range) on the next call.
      let saved = try await client.download(.get("movies/3/poster"), to: poster) { progress in
        done.withLock { $0.append(progress) }  // "1.5 MB of 3.0 MB (50%)", at most 10 a second
      }
      print(saved.status, saved.validators.etag ?? "")  // 200 "poster-3-3000000"

      // As it comes: the head now, the body in chunks with back-pressure; lines and events.
      let live = try await client.stream(.get("ratings/live"))
      for try await event in live.body.events {
        print(event.event, event.data)  // rating {"movie": 3, "score": 81}
      }
      // end snippet
      let sample = try Snippets.sample(
        named: "large-bodies", in: Snippets.documents(under: Snippets.repositoryRoot()))
      #expect(output.all == Snippets.expectedOutput(of: try #require(sample)))
      #expect(try Data(contentsOf: poster).count == 3_000_000)
      #expect(
        done.withLock { $0.last } == TransferProgress(completed: 3_000_000, expected: 3_000_000))
      #expect(slowest.slowest.withLock { $0 } > .zero)
    }
  }
}
