import Foundation
import SampleApi

#if canImport(Glibc)
  import Glibc
#endif

/// `kernel-bench memory`: the peak resident memory of a whole `kernel movies top-grossing`
/// process whose answer is 100,000 movies (about 21 MB of JSON) from a loopback server, under
/// the `layered` profile (decoded, shown and stored in the cache) and the `api` profile
/// (decoded and shown), each divided by the answer's size (measured by GNU time); medians of
/// three runs each.
/// Budget: at most 8x the answer.
enum MemoryBench {
  static let movies = 100_000
  static let runs = 3

  static func run() async throws {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-bench-memory-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let kernel = try CliBench.binary("KERNEL_BIN", ".build/release/kernel", build: [])
    let time = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: time) else {
      throw BenchError("GNU time is not installed (apt-get install time)")
    }

    let encoder = JSONEncoder()
    let answer = try encoder.encode((1...movies).map { SampleMovie.generated(id: 15 + $0) })
    let server = try await FixtureServer.start()
    server.handle("GET", "/api/movies/topGrossing/2016") { _ in
      SampleResponse(status: 200, headers: ["Content-Type": "application/json"], body: answer)
    }
    defer { Task { await server.stop() } }

    // Runs start from the work folder, so no Config/kernel.yaml is found there.
    let home = FileManager.default.currentDirectoryPath
    guard FileManager.default.changeCurrentDirectoryPath(work.path) else {
      throw BenchError("cannot enter \(work.path)")
    }
    defer { _ = FileManager.default.changeCurrentDirectoryPath(home) }
    var fields: [String] = []
    var worst = 0.0
    for profile in ["layered", "api"] {
      var peaks: [Double] = []
      for run in 0..<runs {
        let data = work.appendingPathComponent("data-\(profile)-\(run)")
        let report = work.appendingPathComponent("peak-\(profile)-\(run)")
        // GNU time forks kernel from its own small process: a child spawned from this one
        // would count this process's memory as its own (Linux keeps the larger of the two).
        let status = try await onThread {
          try CliBench.spawn(
            time,
            [
              "-f", "%M", "-o", report.path, kernel.path, "--profile", profile,
              "--environment", "local", "--base-url", server.baseURL.absoluteString,
              "--data-dir", data.path, "movies", "top-grossing", "--year", "2016", "--format",
              "json",
            ])
        }
        guard status == 0 else { throw BenchError("kernel --profile \(profile) exited \(status)") }
        let kilobytes = try String(contentsOf: report, encoding: .utf8)
          .split(whereSeparator: \.isNewline).last.flatMap { Double($0) }
        guard let kilobytes else { throw BenchError("time wrote no peak for \(profile)") }
        peaks.append(kilobytes * 1024)
      }
      let peak = median(peaks)
      let ratio = peak / Double(answer.count)
      worst = max(worst, ratio)
      fields.append(
        "\(profile)_peak_mb=\(String(format: "%.1f", peak / 1e6)) \(profile)_ratio=\(String(format: "%.1f", ratio))"
      )
    }
    print(
      "memory.top_grossing_100k answer_mb=\(String(format: "%.1f", Double(answer.count) / 1e6)) "
        + fields.joined(separator: " "))
    print(
      worst <= 8
        ? "# budget: met (peak at most \(String(format: "%.1f", worst))x the answer; budget 8x)"
        : "# budget missed: peak \(String(format: "%.1f", worst))x the answer (budget 8x)")
  }

  /// Runs `body` on a thread of its own, so a blocking wait holds no thread of the pool the
  /// loopback server answers on.
  static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Result { try body() }) }.start()
    }
  }
}
