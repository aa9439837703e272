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
