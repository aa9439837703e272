import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@Suite(.timeLimit(.minutes(1))) struct MovieRoutesTests {
  /// The api source hands its validators up in its answer and takes a stored copy's down in the
  /// client it is made over: values both ways, nothing kept in the client.
  @Test func anAnswerCarriesItsValidatorsAndAClientOfferingThemIsAnsweredNotModified()
    async throws
  {
    try await withLoopbackApi(routes: .sampleMovies()) { harness in
      harness.server.handle("GET", "/api/movies/1") { request in
        if request.headers["if-none-match"] == "\"v7\"" { return SampleResponse(status: 304) }
        var response = await harness.server.responder.original(request)
        response.headers["ETag"] = "\"v7\""
        return response
      }
      let answer = try await harness.client.response(ApiRequest<Movie>(.movie(id: 1)))
      #expect(answer.value.name == "Finding Dory")
      #expect(answer.validators == CacheValidators(etag: "\"v7\""))
      let offering = harness.client.offering(answer.validators)
      await #expect(throws: NotModified.self) {
        try await offering.response(ApiRequest<Movie>(.movie(id: 1)))
      }
      // Only the client made for the call offers them.
      #expect(try await harness.client.response(ApiRequest<Movie>(.movie(id: 1))).value.id == 1)
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func aMovieByIdDecodesToTheDomainValue(kind: LoopbackApi.Route) async throws {
    try await withLoopbackApi(kind, routes: .sampleMovies()) { harness in
      let movie = try await harness.movies.movie(id: 1)
      #expect(movie == (try expected(try #require(SampleMovie.movie(id: 1)))))
      #expect(movie.name == "Finding Dory")
      #expect(CalendarDay.string(from: movie.releaseDate) == "2016-06-17")
      #expect(movie.cast.map(\.name) == ["Ellen DeGeneres", "Albert Brooks", "Ed O'Neill"])
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func theYearlyListsDecodeInTheServersOrder(kind: LoopbackApi.Route) async throws {
    try await withLoopbackApi(kind, routes: .sampleMovies()) { harness in
      let grossing = try await harness.movies.topGrossingMovies(year: 2016)
      #expect(grossing == (try SampleMovie.topGrossing(year: 2016).map(expected)))
      #expect(grossing.count == 10)
      #expect(grossing.first?.name == "Rogue One: A Star Wars Story")
      let rated = try await harness.movies.topRatedMovies(year: 2015)
      #expect(rated == (try SampleMovie.topRated(year: 2015).map(expected)))
      #expect(rated.first?.name == "Inside Out")
      #expect(try await harness.movies.topGrossingMovies(year: 1999).isEmpty)
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func authStoresThePlainTextTokenInTheContext(kind: LoopbackApi.Route) async throws {
    try await withLoopbackApi(kind, routes: .sampleMovies()) { harness in
      #expect(harness.context.token == nil)
      try await harness.client.login()
      let token = try #require(harness.context.token)
      #expect(token.secret.hasPrefix("sample-1-"))
      #expect(harness.context.token == token)
      #expect(!token.description.contains(token.secret))
      #expect(harness.server.responder.requests(to: "auth") == 1)
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func anUnknownMovieIsNotFoundNamingTheRouteAndTheServersMessage(kind: LoopbackApi.Route)
    async throws
  {
    try await withLoopbackApi(kind, routes: .sampleMovies()) { harness in
      let error = await apiError { try await harness.movies.movie(id: 999) }
      guard case .status(let failure) = error else {
        Issue.record("expected a status error, got \(String(describing: error))")
        return
      }
      #expect(failure.route == .movie(id: 999))
      #expect(failure.status == 404)
      #expect(failure.message == "no movie with id 999")
      #expect(error?.failure == .notFound)
      #expect(
        error?.description == "GET movies/999 was not found (HTTP 404): no movie with id 999.")
    }
  }

  @Test(arguments: LoopbackApi.Route.allCases)
  func serverErrorsAreUnavailableAndNameTheRoute(kind: LoopbackApi.Route) async throws {
    var options = SampleApiResponder.Options()
    options.failFirst = 1
    try await withLoopbackApi(kind, routes: .sampleMovies(), options: options) { harness in
      let error = await apiError { try await harness.movies.topRatedMovies(year: 2016) }
      #expect(error?.failure == .unavailable)
      guard case .status(let failure) = error, failure.status == 503,
        failure.route == .topRatedMovies(year: 2016)
      else {
        Issue.record("expected a 503 for the route, got \(String(describing: error))")
        return
      }
      let retried = try await harness.movies.topRatedMovies(year: 2016)
      #expect(retried.count == 10)
    }
  }

  @Test func aServerThatIsNotThereIsUnreachableNamingTheHost() async throws {
    let client = try await clientOfStoppedServer()
    let error = await apiError { try await client.response(ApiRequest<Movie>(.movie(id: 1))) }
    guard case .unreachable(let route, let host, _) = error else {
      Issue.record("expected unreachable, got \(String(describing: error))")
      return
    }
    #expect(route == .movie(id: 1))
    #expect(host == "127.0.0.1")
    #expect(error?.failure == .unreachable)
  }
}
