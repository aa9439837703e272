import Api
import Dispatch
import Domain
import Foundation
import SampleApi

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// What bare `URLSession` code decodes a movie into: the fields, the date left as text.
private struct BareMovie: Decodable {
  let id: Int
  let name: String
  let year: Int
  let releaseDate: String
  let grossing: Int
  let rating: Double
  let cast: [BareActor]
}

private struct BareActor: Decodable {
  let name: String
}

/// Our whole pipeline (route, context, transport, validation, decoding, conversion) against
/// bare `URLSession` fetching and decoding the same route from the fixture server, in one run.
enum HttpBench {
  static func run() async throws {
    let server = try await FixtureServer.start()
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "local", baseURL: server.baseURL))
    let movies = ApiMovieService(
      client: ApiClient(context: context, transport: URLSessionTransport()))
    let session = URLSession(configuration: .ephemeral)
    let url = Route.topGrossingMovies(year: 2016).url(in: context.environment)

    let kernel: @Sendable () async throws -> Int = {
      try await movies.topGrossingMovies(year: 2016).count
    }
    let bare: @Sendable () async throws -> Int = {
      let (data, _) = try await session.data(for: URLRequest(url: url))
      return try JSONDecoder().decode([BareMovie].self, from: data).count
    }
    guard try await kernel() == 10, try await bare() == 10 else {
      print("kernel-bench: http: the fixture server did not answer ten movies")
      return
    }
    let medians = try await interleaved(
      rounds: 21, iterations: 100, ["kernel": kernel, "urlsession": bare])
    await server.stop()
    let ours = medians["kernel"] ?? 0
    let theirs = medians["urlsession"] ?? 0
    print("http.loopback_get kernel_ns=\(Int(ours)) urlsession_ns=\(Int(theirs))")
    let ratio = theirs > 0 ? ours / theirs : 0
    let percent = ((ratio - 1) * 1000).rounded() / 10
    print(
      "# GET movies/topGrossing/2016 (10 movies): kernel costs \(percent >= 0 ? "+" : "")\(percent)% over bare URLSession"
    )
    print(
      ratio <= 1.10 ? "# targets: all met" : "# targets missed: kernel over 1.10x bare URLSession")
    try await storm()
  }

  /// Fifty concurrent requests through one token expiry, seven times, each on a new client
  /// (one client allows 5 refreshes in 30 seconds): the median wall time of a storm, and the
  /// most calls to `auth` any storm made (one is right).
  static func storm() async throws {
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.extraMovies = 50
    let server = try await FixtureServer.start(options: options)
    let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
    let transport = URLSessionTransport()
    var times: [Double] = []
    var authCalls: [Int] = []
    var failures = 0
    for _ in 0..<7 {
      let client = ApiClient(
        context: InMemoryApiContext(environment: environment), transport: transport)
      let movies = ApiMovieService(client: client)
      try await ApiAuthService(client: client).authorize()
      server.responder.expireTokens()
      let before = server.responder.requests(to: "auth")
      let start = DispatchTime.now().uptimeNanoseconds
      failures += await withTaskGroup(of: Int.self) { group in
        for id in 1...50 { group.addTask { (try? await movies.movie(id: id)) == nil ? 1 : 0 } }
        return await group.reduce(0, +)
      }
      times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
      authCalls.append(server.responder.requests(to: "auth") - before)
    }
    await server.stop()
    let calls = authCalls.max() ?? 0
    print("http.storm_50 kernel_ms=\((median(times) * 10).rounded() / 10) auth_calls=\(calls)")
    print(
      "# 7 storms of 50 requests with an expired token: \(failures) failed, auth calls per storm \(authCalls)"
    )
    print(
      calls == 1 && failures == 0
        ? "# targets: all met" : "# targets missed: one refresh per storm, no failures")
  }

  /// Median nanoseconds per call of each contender, sampled in alternating rounds.
  static func interleaved(
    rounds: Int, iterations: Int, _ contenders: [String: @Sendable () async throws -> Int]
  ) async throws -> [String: Double] {
    var samples: [String: [Double]] = [:]
    let names = contenders.keys.sorted()
    for round in 0..<rounds {
      for name in round.isMultiple(of: 2) ? names : names.reversed() {
        guard let body = contenders[name] else { continue }
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<iterations { _ = try await body() }
        samples[name, default: []].append(
          Double(DispatchTime.now().uptimeNanoseconds - start) / Double(iterations))
      }
    }
    return samples.mapValues(median)
  }
}
