import Domain
import Foundation
import SampleApi
import Testing

@testable import Api

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Sends every request as a POST, to see what the retriers do with a method that is not
/// idempotent (every route itself is a GET).
private struct AsPost: RequestAdapter {
  func adapt(_ request: URLRequest, for attempt: Attempt) async throws -> URLRequest {
    var post = request
    post.httpMethod = "POST"
    return post
  }
}

@Suite(.timeLimit(.minutes(1))) struct BackoffRetrierTests {
  private static var quick: BackoffRetrier.Policy {
    var policy = BackoffRetrier.Policy()
    policy.baseDelay = .milliseconds(5)
    return policy
  }

  @Test func fiftyMoviesWhoseFirstTwoTriesFailAllArriveWithTwoRetries() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 2
    options.extraMovies = 50
    try await withHarness(options: options, retriers: [.backoff(Self.quick)]) { harness in
      let movies = try await withThrowingTaskGroup(of: Movie.self) { group in
        for id in 1...50 { group.addTask { try await harness.movies.movie(id: id) } }
        return try await group.reduce(into: [Movie]()) { $0.append($1) }
      }
      #expect(Set(movies.map(\.id)) == Set(1...50))
      #expect(harness.server.responder.totalRequests == 150)
    }
  }

  @Test func threeFailuresAreOneTooManyForTheDefaultTwoRetries() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 3
    try await withHarness(options: options, retriers: [.backoff(Self.quick)]) { harness in
      let error = await apiError { try await harness.movies.movie(id: 1) }
      guard case .status(.movie(1), 503, _) = error else {
        Issue.record("expected the last 503, got \(String(describing: error))")
        return
      }
      #expect(harness.server.responder.requests(to: "movies/1") == 3)
    }
  }

  @Test func aPostIsNeverRetried() async throws {
    try await withHarness(adapters: [AsPost()], retriers: [.backoff(Self.quick)]) { harness in
      let calls = Count()
      harness.server.handle("POST", "/api/movies/1") { _ in
        calls.increment()
        return htmlResponse("{}", status: 503)
      }
      let error = await apiError { try await harness.movies.movie(id: 1) }
      guard case .status(_, 503, _) = error else {
        Issue.record("expected a 503, got \(String(describing: error))")
        return
      }
      #expect(calls.current == 1)
    }
  }

  @Test func retryAfterIsHonoured() async throws {
    try await withHarness(retriers: [.backoff(Self.quick)]) { harness in
      let calls = Count()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        if calls.current == 1 {
          return SampleResponse(status: 503, headers: ["Retry-After": "1"])
        }
        return await harness.server.responder.respond(to: SampleRequest(path: "/api/movies/1"))
      }
      let started = ContinuousClock.now
      let movie = try await harness.movies.movie(id: 1)
      #expect(movie.id == 1)
      #expect(ContinuousClock.now - started >= .seconds(1))
      #expect(calls.current == 2)
    }
  }

  @Test func aRetryAfterPastTheCapGivesUpAtOnceWithAClearError() async throws {
    try await withHarness(retriers: [.backoff(Self.quick)]) { harness in
      let calls = Count()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return SampleResponse(status: 503, headers: ["Retry-After": "99999"])
      }
      let error = await apiError { try await harness.movies.movie(id: 1) }
      // One call and this error: it did not wait (a wait would be 99999 s, past the test's limit).
      #expect(calls.current == 1)
      guard case .retryAfterTooLong(.movie(1), 99999, 30) = error else {
        Issue.record("expected retryAfterTooLong, got \(String(describing: error))")
        return
      }
      #expect(
        error?.description
          == "GET movies/1 was asked to retry after 99999 s, longer than the 30 s this client waits; try again later."
      )
      #expect(calls.current == 1)
    }
  }

  @Test func aRefusedConnectionIsRetriedThenReportedAsUnreachable() async throws {
    let client = try await clientOfStoppedServer(retriers: [.backoff(Self.quick)])
    let started = ContinuousClock.now
    let error = await apiError { try await ApiMovieService(client: client).movie(id: 1) }
    guard case .unreachable(.movie(1), "127.0.0.1", _) = error else {
      Issue.record("expected unreachable, got \(String(describing: error))")
      return
    }
    #expect(ContinuousClock.now - started >= .milliseconds(5))
  }

  @Test(arguments: [400, 401, 404, 501])
  func statusesThatWillNotPassAreNotRetried(status: Int) async throws {
    try await withHarness(retriers: [.backoff(Self.quick)]) { harness in
      let calls = Count()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return htmlResponse("{}", status: status)
      }
      _ = await apiError { try await harness.movies.movie(id: 1) }
      #expect(calls.current == 1)
    }
  }

  @Test func cancellingDuringARetryDelayEndsPromptly() async throws {
    try await withHarness(retriers: [.backoff]) { harness in
      let calls = Count()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return SampleResponse(status: 503, headers: ["Retry-After": "20"])
      }
      await expectPromptCancellation(
        of: { try await harness.movies.movie(id: 1) }, once: { calls.current > 0 })
      #expect(calls.current == 1)
    }
  }

  @Test func delaysGrowExponentiallyWithinTheirJitter() {
    var policy = BackoffRetrier.Policy()
    policy.baseDelay = .milliseconds(100)
    policy.maxDelay = .milliseconds(350)
    let retrier = BackoffRetrier(policy: policy)
    for _ in 0..<100 {
      let first = retrier.delay(afterRetries: 0)
      let second = retrier.delay(afterRetries: 1)
      let capped = retrier.delay(afterRetries: 5)
      #expect(first >= .milliseconds(50) && first <= .milliseconds(150))
      #expect(second >= .milliseconds(100) && second <= .milliseconds(300))
      #expect(capped >= .milliseconds(175) && capped <= .milliseconds(525))
    }
  }
}
