import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Synchronization
import Testing

@testable import Api

/// Every try a client makes reaches its monitors as it ends, with what the transport measured:
/// a 503 and its retry are two events, a redirect and where it leads are two, over real loopback
/// HTTP.
@Suite(.timeLimit(.minutes(1))) struct RequestMonitorTests {
  final class Heard: RequestMonitor {
    let events = Mutex<[RequestEvent]>([])
    let notes = Mutex<[String]>([])
    func requestEnded(_ event: RequestEvent) { events.withLock { $0.append(event) } }
    func note(_ text: String) { notes.withLock { $0.append(text) } }
  }

  /// Alamofire's stream metrics: a stream's try is heard at its head, then again when its body
  /// ends, with the metrics of the whole exchange (every byte of the body counted).
  @Test func aStreamIsHeardAgainWhenItsBodyEndsWithItsMetrics() async throws {
    let length = 300_000
    let source = try DownloadSource(DownloadSource.Settings(length: length))
    let heard = Heard()
    let client = ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: source.baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), monitors: [heard])
    let streamed = try await client.stream(.get("poster"))
    var count = 0
    for try await chunk in streamed.body { count += chunk.count }

    #expect(count == length)
    let events = heard.events.withLock { $0 }
    #expect(events.map(\.result) == ["200", "200, its body ended"], "\(events.map(\.line))")
    #expect(events.first?.metrics == nil)
    let measured = try #require(events.last?.metrics)
    #expect(measured.bytesReceived == Int64(length))
    #expect(events.last?.attempt == 1)
  }

  /// Alamofire's lifetime events: a request cancelled mid-way is a try that ended too, a
  /// download's and a plain request's alike, each heard once as cancelled.
  @Test func aTryCancelledMidWayIsOneEventSaidCancelled() async throws {
    var settings = DownloadSource.Settings(length: 1_000_000)
    settings.holdAfter = 500_000
    let source = try DownloadSource(settings)
    let folder = try TemporaryDirectory("monitor")
    defer { folder.remove() }
    let heard = Heard()
    let client = { (source: DownloadSource) in
      ApiClient(
        context: InMemoryApiContext(
          environment: try ApiEnvironment(name: "local", baseURL: source.baseURL)),
        transport: PlatformTransport(configuration: .loopbackTests), retriers: [.backoff],
        monitors: [heard])
    }
    let downloading = try client(source)
    let download = Task {
      try await downloading.download(.get("poster"), to: folder.appending("p"))
    }
    await source.held()
    download.cancel()
    _ = await download.result
    source.release()
    let second = try DownloadSource(settings)
    let other = try client(second)
    let plain = Task { try await other.response(for: .get("poster")) }
    await second.held()
    plain.cancel()
    let plainResult = await plain.result
    second.release()

    let events = heard.events.withLock { $0 }
    #expect(
      events.map(\.result) == ["cancelled", "cancelled"], "\(events.map(\.line)) \(plainResult)")
    #expect(events.allSatisfy { $0.status == nil && $0.attempt == 1 })
    #expect(events.first?.line.contains("→ cancelled") == true, "\(events.map(\.line))")
  }

  @Test func retriesAndRedirectsAreEachAnEventWithTheTransportsMetrics() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 1
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      server.handle("GET", "/api/old/{id}") { request in
        SampleResponse(
          status: 302, headers: ["Location": "/api/movies/\(request.parameters["id"] ?? "")"])
      }
      let heard = Heard()
      let client = ApiClient(
        context: InMemoryApiContext(
          environment: try ApiEnvironment(name: "local", baseURL: server.baseURL)),
        transport: PlatformTransport(configuration: .loopbackTests), retriers: [.backoff],
        clock: TestClock(immediate: true),
        monitors: [heard])
      let movie = try await client.send(ApiRequest<Movie>(.get("old/1")))
      #expect(movie.id == 1)

      let events = heard.events.withLock { $0 }
      // /old/1 503; /old/1 302 → /movies/1 503; /old/1 302 → /movies/1 200.
      #expect(events.map(\.status) == [503, 302, 503, 302, 200])
      #expect(events.map(\.attempt) == [1, 2, 2, 3, 3])
      #expect(events.map(\.redirect) == [0, 0, 1, 0, 1])
      #expect(
        events.map { $0.request.path ?? "" } == [
          "/api/old/1", "/api/old/1", "/api/movies/1", "/api/old/1", "/api/movies/1",
        ])
      for event in events {
        let metrics = try #require(event.metrics, "\(event.line)")
        #expect(metrics.connect != nil && metrics.firstByte != nil, "\(event.line)")
        #expect(metrics.total >= (metrics.firstByte ?? .zero))
        #expect(event.line.contains("first byte after"), "\(event.line)")
      }
      let last = try #require(events.last?.metrics)
      #expect(last.bytesReceived > 100)
      #expect(events[0].next.hasPrefix("; retried in"))
      #expect(events[1].next.hasPrefix("; redirected to"))
    }
  }

  @Test func aDownloadsBytesAreMeasured() async throws {
    let source = try DownloadSource(DownloadSource.Settings(length: 1_000_000))
    let folder = try TemporaryDirectory("monitor")
    defer { folder.remove() }
    let heard = Heard()
    let client = ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: source.baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), monitors: [heard])
    _ = try await client.download(.get("file"), to: folder.appending("file.bin"))
    let events = heard.events.withLock { $0 }
    #expect(events.count == 1)
    #expect(events.first?.metrics?.bytesReceived == 1_000_000)
  }
}
