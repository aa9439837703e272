import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@Suite struct SampleApiResponderTests {
  private func get(
    _ responder: SampleApiResponder, _ path: String, token: String? = nil
  ) async -> SampleResponse {
    var headers: [String: String] = [:]
    if let token { headers["Authorization"] = "Bearer \(token)" }
    return await responder.respond(to: SampleRequest(path: "/api/" + path, headers: headers))
  }

  private func json(_ response: SampleResponse) throws -> Any {
    try JSONSerialization.jsonObject(with: response.body)
  }

  @Test func theBundledDataHoldsTheTalksTenMoviesOf2016() {
    let names = Set(SampleMovie.all.filter { $0.year == 2016 }.map(\.name))
    #expect(
      names == [
        "Finding Dory", "Rogue One: A Star Wars Story", "Captain America: Civil War",
        "The Secret Life of Pets",
        "The Jungle Book", "Deadpool", "Zootopia", "Batman v Superman: Dawn of Justice",
        "Suicide Squad",
        "Doctor Strange",
      ])
    for movie in SampleMovie.all {
      #expect(movie.cast.count == 3, "\(movie.name)")
      #expect(CalendarDay.date(from: movie.releaseDate) != nil, "\(movie.name)")
      #expect(movie.releaseDate.hasPrefix(String(movie.year)), "\(movie.name)")
    }
    #expect(Set(SampleMovie.all.map(\.id)).count == SampleMovie.all.count)
  }

  @Test func routesAnswerJSONAsTextHtml() async throws {
    let responder = SampleApiResponder(routes: .sampleMovies())
    let movie = await get(responder, "movies/1")
    #expect(movie.status == 200)
    #expect(movie.headers["Content-Type"]?.hasPrefix("text/html") == true)
    let object = try #require(try json(movie) as? [String: Any])
    #expect(object["name"] as? String == "Finding Dory")
    #expect(object["releaseDate"] as? String == "2016-06-17")

    let list = try #require(
      try json(await get(responder, "movies/topGrossing/2016")) as? [[String: Any]])
    #expect(
      list.compactMap { $0["grossing"] as? Int }
        == list.compactMap { $0["grossing"] as? Int }.sorted(by: >))
    let rated = try #require(
      try json(await get(responder, "movies/topRated/2016")) as? [[String: Any]])
    #expect(rated.first?["name"] as? String == "Zootopia")
  }

  @Test(arguments: ["movies/99", "movies/abc", "movies/topGrossing/twenty", "nothing/here"])
  func unknownPathsAre404(path: String) async {
    #expect(await get(SampleApiResponder(routes: .sampleMovies()), path).status == 404)
  }

  @Test func asManyExtraMoviesAsAnIntHoldsNeverOverflow() async throws {
    let responder = SampleApiResponder(routes: .sampleMovies(extraMovies: Int.max))
    for id in [16, 99, Int.max] {
      let response = await get(responder, "movies/\(id)")
      #expect(response.status == 200)
      #expect((try json(response) as? [String: Any])?["id"] as? Int == id)
    }
  }

  @Test func theFirstRequestsOfEachPathFailWhenAsked() async {
    var options = SampleApiResponder.Options()
    options.failFirst = 2
    options.retryAfter = 1
    let responder = SampleApiResponder(options: options, routes: .sampleMovies())
    let statuses = [
      await get(responder, "movies/1").status, await get(responder, "movies/2").status,
      await get(responder, "movies/1").status, await get(responder, "movies/1").status,
    ]
    #expect(statuses == [503, 503, 503, 200])
    #expect(await get(responder, "movies/3").headers["Retry-After"] == "1")
    #expect(responder.requests(to: "movies/1") == 3)
    #expect(responder.totalRequests == 5)
  }

  @Test func aSeededFailureRateRepeatsExactly() async {
    var options = SampleApiResponder.Options()
    options.failureRate = 0.3
    options.seed = 42
    func run() async -> [Int] {
      let responder = SampleApiResponder(options: options, routes: .sampleMovies())
      var statuses: [Int] = []
      for id in 1...40 { statuses.append(await get(responder, "movies/\(id % 15 + 1)").status) }
      return statuses
    }
    let first = await run()
    #expect(first == (await run()))
    let failures = first.filter { $0 == 503 }.count
    #expect((4...20).contains(failures))
  }

  @Test func requireAuthAnswers401UntilATokenIsPresented() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    let responder = SampleApiResponder(options: options, routes: .sampleMovies())
    #expect(await get(responder, "movies/1").status == 401)
    let token = String(decoding: await get(responder, "auth").body, as: UTF8.self)
    #expect(await get(responder, "movies/1", token: token).status == 200)
    #expect(await get(responder, "movies/1", token: "forged").status == 401)
    responder.expireTokens()
    #expect(await get(responder, "movies/1", token: token).status == 401)
  }

  @Test func tokensExpireAfterTheirLifetimeOnTheServersClock() async throws {
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.tokenLifetime = .seconds(60)
    options.clock = clock
    let responder = SampleApiResponder(options: options, routes: .sampleMovies())
    let token = String(decoding: await get(responder, "auth").body, as: UTF8.self)
    clock.advance(by: .seconds(59))
    #expect(await get(responder, "movies/1", token: token).status == 200)
    clock.advance(by: .seconds(1))
    #expect(await get(responder, "movies/1", token: token).status == 401)
    #expect(responder.expiredTokensRefused == 1)
  }

  @Test func latencyIsWaitedOnTheServersClock() async throws {
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.latency = .milliseconds(250)
    options.clock = clock
    let responder = SampleApiResponder(options: options, routes: .sampleMovies())
    let answer = Task { await get(responder, "movies/1") }
    await clock.waitForSleepers()
    #expect(clock.sleeps == [.milliseconds(250)])
    clock.advance(by: .milliseconds(250))
    #expect(await answer.value.status == 200)
  }

  @Test func theFixtureServerServesOverLoopback() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let response = try await fetch(server.baseURL.appendingPathComponent("movies/2"))
    await server.stop()
    #expect(response.status == 200)
    #expect(String(decoding: response.body, as: UTF8.self).contains("Rogue One"))
    #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)/api/")
  }

  /// The refusing port is held alone: a server that asks for it, as a test beside another might
  /// be given it, cannot listen there, so a client of the port is refused and never answered.
  @Test func theRefusingPortCanBeTakenByNoServerAndRefusesClients() async throws {
    let url = try RefusingPort.url()
    let port = try #require(url.port.flatMap { UInt16(exactly: $0) })
    await #expect(throws: FixtureServerError.self) {
      let server = try await FixtureServer.start(routes: .sampleMovies(), port: port)
      await server.stop()
    }
    await #expect(throws: (any Error).self) {
      try await fetch(url.appendingPathComponent("movies/1"))
    }
    #expect(try RefusingPort.url() == url)
  }

  /// A held port refuses clients and is no other server's until the server that takes it over
  /// answers there; it is taken once.
  @Test func aHeldPortRefusesUntilTheServerThatTakesItAnswers() async throws {
    let held = try RefusingPort.hold()
    let url = try #require(URL(string: held.baseURL + "movies/1"))
    await #expect(throws: FixtureServerError.self) {
      let server = try await FixtureServer.start(routes: .sampleMovies(), port: held.port)
      await server.stop()
    }
    await #expect(throws: (any Error).self) { try await fetch(url) }
    let server = try await FixtureServer.start(routes: .sampleMovies(), on: held)
    #expect(server.port == held.port)
    let answer = try await fetch(url)
    #expect(answer.status == 200)
    #expect(String(decoding: answer.body, as: UTF8.self).contains("\"id\":1"))
    await #expect(throws: FixtureServerError.self) {
      let again = try await FixtureServer.start(routes: .sampleMovies(), on: held)
      await again.stop()
    }
    await server.stop()
  }
}

@Suite struct GeneratedMoviesTests {
  @Test func idsPastTheBundledOnesAreMadeUpOnlyWhenAsked() async throws {
    let responder = SampleApiResponder(routes: .sampleMovies(extraMovies: 10))
    let made = await responder.respond(to: SampleRequest(path: "/api/movies/25"))
    #expect(made.status == 200)
    #expect(String(decoding: made.body, as: UTF8.self).contains("Generated Movie 25"))
    #expect(await responder.respond(to: SampleRequest(path: "/api/movies/26")).status == 404)
    #expect(
      await SampleApiResponder(routes: .sampleMovies()).respond(
        to: SampleRequest(path: "/api/movies/16")
      ).status == 404)
    #expect(SampleMovie.generated(id: 400) == SampleMovie.generated(id: 400))
    #expect(CalendarDay.date(from: SampleMovie.generated(id: 400).releaseDate) != nil)
  }
}

extension SampleApiResponderTests {
  /// An `Idempotency-Key` answers its own request again, applying nothing twice; reused for
  /// another request it is refused with 422 (the IETF draft), and nothing is applied.
  @Test func anIdempotencyKeyReusedForAnotherRequestIs422() async throws {
    let ratings = SampleRatings()
    let responder = SampleApiResponder(routes: .sampleMovies(ratings: ratings))
    func rate(_ id: Int, _ score: Int, key: String) async -> SampleResponse {
      await responder.respond(
        to: SampleRequest(
          method: "POST", path: "/api/movies/\(id)/ratings",
          headers: ["Idempotency-Key": key, "Content-Type": "application/json"],
          body: Data(#"{"score": \#(score)}"#.utf8)))
    }
    let first = await rate(1, 80, key: "k1")
    #expect(first.status == 201)
    let again = await rate(1, 80, key: "k1")
    #expect(again.status == 201 && again.body == first.body)
    #expect(await rate(2, 80, key: "k1").status == 422)
    #expect(await rate(1, 81, key: "k1").status == 422)
    #expect(ratings.applied(to: 1).count == 1)
    #expect(ratings.applied(to: 2).isEmpty)
  }
}
