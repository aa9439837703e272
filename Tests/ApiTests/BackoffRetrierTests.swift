import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@testable import Api

/// Sends every request as a POST, to see what the retriers do with a method that is not
/// idempotent (every route itself is a GET).
@Suite(.timeLimit(.minutes(1))) struct BackoffRetrierTests {
  /// The default policy with the jitter factor fixed at 1: delays are exactly 200 ms, 400 ms, …
  private static var exact: BackoffRetrier { BackoffRetrier(random: .fixed(0.5)) }

  @Test func fiftyMoviesWhoseFirstTwoTriesFailAllArriveWithTwoRetries() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 2
    let clock = TestClock(immediate: true)
    try await withLoopbackApi(
      routes: .sampleMovies(extraMovies: 50), options: options, retriers: [Self.exact], clock: clock
    ) { harness in
      let movies = try await withThrowingTaskGroup(of: Movie.self) { group in
        for id in 1...50 { group.addTask { try await harness.movies.movie(id: id) } }
        return try await group.reduce(into: [Movie]()) { $0.append($1) }
      }
      #expect(Set(movies.map(\.id)) == Set(1...50))
      #expect(harness.server.responder.totalRequests == 150)
      let waits = clock.sleeps
      #expect(waits.filter { $0 == .milliseconds(200) }.count == 50, "\(waits)")
      #expect(waits.filter { $0 == .milliseconds(400) }.count == 50)
      #expect(waits.count == 100)
    }
  }

  @Test func threeFailuresAreOneTooManyForTheDefaultTwoRetries() async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 3
    let clock = TestClock(immediate: true)
    try await withLoopbackApi(
      routes: .sampleMovies(), options: options, retriers: [Self.exact], clock: clock
    ) { harness in
      let error = await apiError { try await harness.movies.movie(id: 1) }
      guard case .status(let failure) = error, failure.status == 503, failure.route == .movie(id: 1)
      else {
        Issue.record("expected the last 503, got \(String(describing: error))")
        return
      }
      #expect(harness.server.responder.requests(to: "movies/1") == 3)
      #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
    }
  }

  @Test func aPostIsNeverRetriedUnlessItSaysItIsIdempotent() async throws {
    let clock = TestClock(immediate: true)
    try await withLoopbackApi(
      routes: .sampleMovies(), authentication: nil, retriers: [Self.exact], clock: clock
    ) {
      harness in
      let calls = Counter()
      let bodies = Recorder<String>()
      harness.server.handle("POST", "/api/shelves") { request in
        calls.increment()
        bodies.append(String(decoding: request.body, as: UTF8.self))
        return htmlResponse("{}", status: 503)
      }
      let body = Data(#"{"name": "to read"}"#.utf8)
      let error = await apiError {
        try await harness.client.send(.data(.post("shelves", body: .bytes(body))))
      }
      guard case .status(let failure) = error, failure.status == 503, failure.route.method == .post
      else {
        Issue.record("expected a 503 to the POST, got \(String(describing: error))")
        return
      }
      #expect(calls.value == 1)
      #expect(clock.sleeps.isEmpty)
      // With an idempotency key it may be sent again, body and all.
      _ = await apiError {
        try await harness.client.send(
          .data(.post("shelves", body: .bytes(body), isIdempotent: true)))
      }
      #expect(calls.value == 4)
      #expect(bodies.all.count == 4 && bodies.all.allSatisfy { $0 == #"{"name": "to read"}"# })
    }
  }

  @Test func retryAfterIsWaitedOnTheClockBeforeTheNextTry() async throws {
    let clock = TestClock()
    try await withLoopbackApi(
      routes: .sampleMovies(), authentication: nil, retriers: [Self.exact], clock: clock
    ) {
      harness in
      let calls = Counter()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        if calls.value == 1 {
          return SampleResponse(status: 503, headers: ["Retry-After": "1"])
        }
        return await harness.server.responder.original(SampleRequest(path: "/api/movies/1"))
      }
      let movie = Task { try await harness.movies.movie(id: 1) }
      await clock.waitForSleepers()
      #expect(clock.sleeps == [.seconds(1)])
      #expect(calls.value == 1)  // the second try waits for the clock
      clock.advance(by: .milliseconds(999))
      #expect(clock.pendingSleeps == 1)
      clock.advance(by: .milliseconds(1))
      let fetched = try await movie.value
      #expect(fetched.id == 1)
      #expect(calls.value == 2)
    }
  }

  @Test func anHttpDateRetryAfterIsMeasuredFromTheInjectedWallClock() {
    let now = Date(timeIntervalSince1970: 1_500_000_000)  // Fri, 14 Jul 2017 02:40:00 GMT
    #expect(
      BackoffRetrier.retryAfter("Fri, 14 Jul 2017 02:40:07 GMT", now: now) == .seconds(7))
    #expect(BackoffRetrier.retryAfter("Fri, 14 Jul 2017 02:39:00 GMT", now: now) == .zero)
    #expect(BackoffRetrier.retryAfter("soon", now: now) == nil)
    // A year whose seconds do not fit an Int is capped, not a crash.
    let far = BackoffRetrier.retryAfter("Fri, 14 Jul 99999999999 02:40:07 GMT", now: now)
    #expect(far == nil || far == .seconds(1_000_000_000))
  }

  @Test func anAnswersRetryAfterIsReadThroughThePublicApi() {
    let now = Date(timeIntervalSince1970: 1_500_000_000)
    let asked = ApiResponse(status: 429, headers: ["Retry-After": "Fri, 14 Jul 2017 02:40:30 GMT"])
    #expect(asked.retryAfter(now: now) == .seconds(30))
    #expect(ApiResponse(status: 503, headers: ["Retry-After": "120"]).retryAfter() == .seconds(120))
    #expect(ApiResponse(status: 503).retryAfter() == nil)
  }

  @Test func aRetryAfterPastTheCapGivesUpAtOnceWithAClearError() async throws {
    let clock = TestClock(immediate: true)
    try await withLoopbackApi(
      routes: .sampleMovies(), authentication: nil, retriers: [Self.exact], clock: clock
    ) {
      harness in
      let calls = Counter()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return SampleResponse(status: 503, headers: ["Retry-After": "99999"])
      }
      let error = await apiError { try await harness.movies.movie(id: 1) }
      #expect(calls.value == 1)
      #expect(clock.sleeps.isEmpty)  // it did not wait
      guard case .retryAfterTooLong(let route, 99999, 30) = error, route == .movie(id: 1) else {
        Issue.record("expected retryAfterTooLong, got \(String(describing: error))")
        return
      }
      #expect(
        error?.description
          == "GET movies/1 was asked to retry after 99999 s, longer than the 30 s this client waits; try again later."
      )
    }
  }

  @Test func aRefusedConnectionIsRetriedThenReportedAsUnreachable() async throws {
    let clock = TestClock(immediate: true)
    let client = try await clientOfStoppedServer(retriers: [Self.exact], clock: clock)
    let error = await apiError { try await client.response(ApiRequest<Movie>(.movie(id: 1))) }
    guard case .unreachable(let route, "127.0.0.1", _) = error, route == .movie(id: 1) else {
      Issue.record("expected unreachable, got \(String(describing: error))")
      return
    }
    #expect(clock.sleeps == [.milliseconds(200), .milliseconds(400)])
  }

  @Test(arguments: [400, 401, 404, 501])
  func statusesThatWillNotPassAreNotRetried(status: Int) async throws {
    let clock = TestClock(immediate: true)
    try await withLoopbackApi(
      routes: .sampleMovies(), authentication: nil, retriers: [Self.exact], clock: clock
    ) {
      harness in
      let calls = Counter()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return htmlResponse("{}", status: status)
      }
      _ = await apiError { try await harness.movies.movie(id: 1) }
      #expect(calls.value == 1)
      #expect(clock.sleeps.isEmpty)
    }
  }

  @Test func cancellingDuringARetryDelayEndsIt() async throws {
    let clock = TestClock()
    try await withLoopbackApi(routes: .sampleMovies(), retriers: [.backoff], clock: clock) {
      harness in
      let calls = Counter()
      harness.server.handle("GET", "/api/movies/1") { _ in
        calls.increment()
        return SampleResponse(status: 503, headers: ["Retry-After": "20"])
      }
      await expectCancellation(
        of: { try await harness.movies.movie(id: 1) }, once: { await clock.waitForSleepers() })
      #expect(calls.value == 1)
      #expect(clock.sleeps == [.seconds(20)])
    }
  }

  @Test func delaysGrowExponentiallyAndAreCappedWithinTheirJitter() {
    var policy = BackoffRetrier.Policy()
    policy.baseDelay = .milliseconds(100)
    policy.maxDelay = .milliseconds(350)
    let lowest = BackoffRetrier(policy: policy, random: .fixed(0))
    let highest = BackoffRetrier(policy: policy, random: .fixed(1))
    #expect(
      (0...5).map { lowest.delay(afterRetries: $0) }.map(\.wholeMilliseconds) == [
        50, 100, 175, 175, 175, 175,
      ])
    #expect(
      (0...2).map { highest.delay(afterRetries: $0) }.map(\.wholeMilliseconds) == [150, 300, 525])
    // A random source out of range is clamped into the jitter.
    let wild = BackoffRetrier(policy: policy, random: RandomSource { _ in 7 })
    #expect(wild.delay(afterRetries: 0) == .milliseconds(150))
  }
}
