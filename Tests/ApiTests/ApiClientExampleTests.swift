import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

/// The `Api` catalog's `ApiClient` sample, verbatim between the snippet markers, run against a loopback
/// server that wants a token (no 503s: backoff would wait on the real clock the sample uses).
@Suite(.timeLimit(.minutes(1))) struct ApiClientExampleTests {
  @Test func theReadmeClientGetsATokenWhenTheServerAsksForOne() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    try await withFixtureServer(routes: .sampleMovies(), options: options) { server in
      let context = InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
      // snippet: api-client
      let client = ApiClient(
        context: context, transport: PlatformTransport(),
        // Accept and User-Agent
        adapters: [.defaultHeaders],
        // the talk's token (GET auth), to the environment's own origin only; one refresh
        // for any number of 401s
        authentication: .plainToken(),
        // backoff for idempotent requests
        retriers: [.backoff])
      // end snippet
      let movie = try await client.response(ApiRequest<Movie>(.movie(id: 2)))
      #expect(movie.value.name == "Rogue One: A Star Wars Story")
      // movies/2 answered 401 (no token yet), auth a token, then movies/2 the movie.
      #expect(server.responder.requests(to: "movies/2") == 2)
      #expect(server.responder.requests(to: "auth") == 1)
      #expect(context.token != nil)
    }
  }
}
