import Domain
import Foundation
import KernelTesting
import SampleApi
import Synchronization
import Testing

@testable import Api

/// `ApiClient.stream` over real loopback HTTP: the head first, then the body as it arrives with
/// back-pressure (a slow reader keeps memory flat), cancellable, with lines and server-sent
/// events over it, after the pipeline's retries.
@Suite(.timeLimit(.minutes(1))) struct StreamTests {
  private static func client(_ baseURL: URL, retriers: [any RequestRetrier] = []) throws
    -> ApiClient
  {
    ApiClient(
      context: InMemoryApiContext(environment: try ApiEnvironment(name: "local", baseURL: baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), retriers: retriers,
      clock: TestClock(immediate: true))
  }

  /// Yields until `condition` holds, at most until an end-to-end deadline against a hang.
  private static func until(_ condition: () -> Bool) async {
    let deadline = ContinuousClock.now + .seconds(20)
    while !condition() && ContinuousClock.now < deadline { await Task.yield() }
  }

  @Test func aSlowReaderPausesTheTransferAndMemoryStaysFlat() async throws {
    let length = 48 << 20
    let source = try DownloadSource(DownloadSource.Settings(length: length))
    let streamed = try await Self.client(source.baseURL).stream(.get("big"))
    #expect(streamed.status == 200)
    var iterator = streamed.body.makeAsyncIterator()
    // Kept to compare at the end; what the transport holds is measured by its own peak.
    var received = try #require(try await iterator.next())
    // The reader stops: the transport fills the buffer, then pauses, and the server is held
    // back by the connection instead of sending everything.
    await Self.until { streamed.body.isPaused }
    #expect(streamed.body.isPaused)
    #expect(source.bytesSent < length / 2, "\(source.bytesSent)")
    while let chunk = try await iterator.next() { received.append(chunk) }
    #expect(received.count == length)
    #expect(received == source.body())
    // At most the limit and one read from the connection waited.
    #expect(streamed.body.peakBuffered <= ResponseStream.bufferLimit + (1 << 20))
  }

  @Test func cancellingTheReaderEndsTheExchange() async throws {
    let length = 48 << 20
    let source = try DownloadSource(DownloadSource.Settings(length: length))
    let streamed = try await Self.client(source.baseURL).stream(.get("big"))
    let reading = Task {
      var count = 0
      for try await chunk in streamed.body {
        count += chunk.count
        if count > 1 << 20 { withUnsafeCurrentTask { $0?.cancel() } }
      }
      return count
    }
    let result = await reading.result
    #expect(throws: CancellationError.self) { try result.get() }
    // The connection is closed: the server stops well short of the whole body.
    #expect(source.bytesSent < length)
  }

  /// Alamofire's expectation: a stream cancelled after its last bytes arrived, before they were
  /// read, ends with `CancellationError`, not with those bytes and a normal end.
  @Test func cancellingAfterTheLastBytesArrivedUnreadEndsWithCancellation() async throws {
    let source = try DownloadSource(DownloadSource.Settings(length: 4_096))
    let streamed = try await Self.client(source.baseURL).stream(.get("big"))
    await Self.until { streamed.body.hasEnded }
    #expect(streamed.body.hasEnded)
    streamed.body.cancel()
    await #expect(throws: CancellationError.self) {
      for try await _ in streamed.body {}
    }
  }

  @Test func linesAndServerSentEventsAreReadAsTheyCome() async throws {
    try await withFixtureServer(routes: .sampleMovies()) { server in
      server.handle("GET", "/api/events") { _ in
        SampleResponse(
          status: 200, headers: ["Content-Type": "text/event-stream"],
          body: Data(
            "event: rating\ndata: 1\ndata: 2\nid: 7\n\n: a comment\ndata: x\r\n\r\nretry: 5\n"
              .utf8))
      }
      let client = try Self.client(server.baseURL)
      let events = try await client.stream(.get("events")).body.events
        .reduce(into: [ServerSentEvent]()) { $0.append($1) }
      #expect(
        events == [
          ServerSentEvent(event: "rating", data: "1\n2", id: "7"),
          ServerSentEvent(event: "message", data: "x", id: "7"),
        ])
      let lines = try await client.stream(.get("events")).body.lines
        .reduce(into: [String]()) { $0.append($1) }
      #expect(lines.count == 9 && lines[5] == ": a comment" && lines[6] == "data: x", "\(lines)")
    }
  }

  @Test func aStreamIsRetriedLikeAnyRequestUntilItsHeadIsA2xx() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 1
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      let client = try Self.client(server.baseURL, retriers: [.backoff])
      let streamed = try await client.stream(.movie(id: 1))
      #expect(streamed.status == 200)
      let body = try await streamed.body.collect(upTo: 1 << 20)
      #expect(String(decoding: body, as: UTF8.self).contains("\"id\":1"))
    }
  }
}
