import Api
import Domain
import Foundation
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Store

/// `kernel-bench outbox`: 1,000 ratings (5 each of 200 movies) kept in an outbox file as
/// `kernel --profile offline movies rate` keeps them, then sent by one release
/// `kernel outbox sync` process to the sample API with 50 ms of latency per answer (the
/// responder `kernel serve --latency 50` runs, here in this process so it can count), under GNU
/// time; medians of three runs. Checks that every rating arrived once and each movie's in the
/// order made. Reports the time to keep one write (in process, on a real file), the sync's wall
/// time and its peak memory. Budget: every write applied once, in order (a miss throws).
enum OutboxBench {
  static let movies = 200
  static let perMovie = 5
  static let runs = Runs.of(3)

  static func run() async throws {
    let (work, kernel, time) = try MemoryBench.prepare("outbox")
    defer { try? FileManager.default.removeItem(at: work) }
    var keepTimes: [Double] = []
    var syncTimes: [Double] = []
    var peaks: [Double] = []
    for run in 0..<runs {
      var options = SampleApiResponder.Options()
      options.latency = .milliseconds(50)
      let ratings = SampleRatings()
      let server = try await FixtureServer.start(
        options: options, routes: .sampleMovies(extraMovies: movies, ratings: ratings))
      let origin = "http://127.0.0.1:\(server.port)"
      let data = work.appendingPathComponent("data-\(run)")
      let outbox = Outbox(
        store: try SQLiteOutboxStore.open(at: data.appendingPathComponent("outbox.sqlite")))
      let clock = ContinuousClock()
      let started = clock.now
      for round in 1...perMovie {
        for id in 1...movies {
          let route = Route.post("movies/\(id)/ratings", body: try .json(["score": round]))
          _ = try await outbox.keep(
            ServiceCall(
              .data(route), name: "rateMovie", summary: "a rating of movie \(id)", stored: false
            ).writing(ordering: "movies/\(id)"),
            origin: origin, partition: origin)
        }
      }
      keepTimes.append((clock.now - started).seconds * 1e6 / Double(movies * perMovie))
      let report = work.appendingPathComponent("time-\(run)")
      let status = try await MemoryBench.onThread {
        try CliBench.spawn(
          time,
          [
            "-f", "%e %M", "-o", report.path, kernel.path, "--environment", "local",
            "--base-url", server.baseURL.absoluteString, "--data-dir", data.path, "outbox", "sync",
          ])
      }
      await server.stop()
      guard status == 0 else { throw BenchError("kernel outbox sync exited \(status)") }
      let fields =
        try String(contentsOf: report, encoding: .utf8).split(whereSeparator: \.isNewline).last?
        .split(separator: " ").compactMap { Double($0) } ?? []
      guard fields.count == 2 else { throw BenchError("time wrote no figures for the sync") }
      syncTimes.append(fields[0])
      peaks.append(fields[1] * 1024 / 1e6)
      let inOrder = (1...movies).allSatisfy {
        ratings.applied(to: $0).map(\.score) == Array(1...perMovie)
      }
      guard ratings.appliedCount == movies * perMovie, inOrder else {
        throw BenchError(
          "the sync applied \(ratings.appliedCount) of \(movies * perMovie) ratings"
            + (inOrder ? "" : ", some out of order"))
      }
    }
    print(
      "outbox.sync_1000 writes=\(movies * perMovie) keep_us=\(String(format: "%.0f", median(keepTimes)))"
        + " sync_s=\(String(format: "%.2f", median(syncTimes)))"
        + " peak_mb=\(String(format: "%.1f", median(peaks))) applied_once_in_order=true")
    // A write lost, doubled or out of order has thrown above: reaching here is the budget met.
    print("# budget: met (every write applied once, in order)")
  }
}
