import Api
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// *Testing your app*'s KernelTesting sample, verbatim between the snippet markers, with its
/// printed output compared to what the article says it prints.
@Suite(.timeLimit(.minutes(1))) struct TestingExampleTests {
  @Test func theReadmeTestAdvancesAClockInsteadOfSleeping() async throws {
    let output = PrintedLines()
    func print(_ value: Any) { output.print("\(value)") }
    // snippet: testing
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.failFirst = 1  // each path's first request answers 503
    let backoff = BackoffRetrier(random: .fixed(0.5))  // no jitter: 200 ms, 400 ms
    try await withLoopbackApi(
      routes: .sampleMovies(), options: options, retriers: [backoff], clock: clock
    ) { api in
      let movie = Task { try await api.movies.movie(id: 1) }
      await clock.waitForSleepers()  // the retry waits on the test clock, not on the wall
      print(clock.sleeps)  // [0.2 seconds]
      clock.advance(by: .milliseconds(200))
      print(try await movie.value.name)  // Finding Dory
      print(api.responder.requests(to: "movies/1"))  // 2
    }
    // end snippet
    let sample = try Snippets.sample(
      named: "testing", in: Snippets.documents(under: Snippets.repositoryRoot()))
    #expect(output.all == Snippets.expectedOutput(of: try #require(sample)))
  }
}
