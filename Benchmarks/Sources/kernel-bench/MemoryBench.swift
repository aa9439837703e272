import Api
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
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
///
/// Then `memory.upload_50mb`: the peak of a process that uploads a 50 MB file as
/// `multipart/form-data` through `ApiClient` to a loopback sink, beside the same process
/// uploading 1 KB; medians of three runs each. Budget: flat, at most 16 MB more than the 1 KB
/// upload (the body is read from disk as it is sent, never whole).
enum MemoryBench {
  static let movies = 100_000
  static let runs = Runs.of(3)

  /// What a suite that times whole `kernel` processes starts from: a folder of its own (the
  /// caller removes it), the release `kernel`, and GNU time.
  static func prepare(_ suite: String) throws -> (work: URL, kernel: URL, time: String) {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-bench-\(suite)-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    let kernel = try CliBench.binary("KERNEL_BIN", ".build/release/kernel", build: [])
    let time = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: time) else {
      throw BenchError("GNU time is not installed (apt-get install time)")
    }
    return (work, kernel, time)
  }

  static func run() async throws {
    let (work, kernel, time) = try MemoryBench.prepare("memory")
    defer { try? FileManager.default.removeItem(at: work) }

    let encoder = JSONEncoder()
    let answer = try encoder.encode((1...movies).map { SampleMovie.generated(id: 15 + $0) })
    let server = try await FixtureServer.start(routes: .sampleMovies())
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
    try await upload(in: work, time: time)
  }

  /// The upload case: this program run again as `kernel-bench upload-once URL FILE`, under
  /// GNU time, for a 50 MB file and a 1 KB one.
  static func upload(in work: URL, time: String) async throws {
    let big = work.appendingPathComponent("upload-50mb.bin")
    let small = work.appendingPathComponent("upload-1kb.bin")
    guard FileManager.default.createFile(atPath: big.path, contents: nil) else {
      throw BenchError("cannot create \(big.path)")
    }
    let handle = try FileHandle(forWritingTo: big)
    let megabyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    for _ in 0..<50 { try handle.write(contentsOf: megabyte) }
    try handle.close()
    try Data(megabyte.prefix(1024)).write(to: small)
    let sink = try UploadSink()
    defer { sink.stop() }
    let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    var peaks: [String: Double] = [:]
    for file in [big, small] {
      var samples: [Double] = []
      for run in 0..<runs {
        let report = work.appendingPathComponent("peak-upload-\(file.lastPathComponent)-\(run)")
        let status = try await onThread {
          try CliBench.spawn(
            time,
            [
              "-f", "%M", "-o", report.path, program, "upload-once",
              sink.baseURL.absoluteString, file.path,
            ])
        }
        guard status == 0 else { throw BenchError("upload-once exited \(status)") }
        let kilobytes = try String(contentsOf: report, encoding: .utf8)
          .split(whereSeparator: \.isNewline).last.flatMap { Double($0) }
        guard let kilobytes else { throw BenchError("time wrote no peak for the upload") }
        samples.append(kilobytes * 1024 / 1e6)
      }
      peaks[file.lastPathComponent] = median(samples)
    }
    let bigPeak = peaks[big.lastPathComponent] ?? 0
    let smallPeak = peaks[small.lastPathComponent] ?? 0
    let received = sink.requests.map(\.bytes).max() ?? 0
    print(
      "memory.upload_50mb file_mb=\(String(format: "%.1f", Double(received) / 1e6))"
        + " peak_mb=\(String(format: "%.1f", bigPeak)) small_peak_mb=\(String(format: "%.1f", smallPeak))"
        + " growth_mb=\(String(format: "%.1f", bigPeak - smallPeak))")
    print(
      bigPeak - smallPeak <= 16
        ? "# budget: met (flat: the 50 MB upload holds at most 16 MB more than 1 KB)"
        : "# budget missed: the 50 MB upload holds \(String(format: "%.1f", bigPeak - smallPeak)) MB more than 1 KB (budget 16)"
    )
  }

  /// `kernel-bench upload-once URL FILE`: posts FILE as multipart to URL's `uploads` and exits.
  static func uploadOnce(_ url: String, _ file: String) async throws {
    guard let base = URL(string: url) else { throw BenchError("not a URL: \(url)") }
    let client = ApiClient(
      context: InMemoryApiContext(environment: try ApiEnvironment(name: "sink", baseURL: base)),
      transport: PlatformTransport(), retriers: [])
    let answer = try await client.send(
      ApiRequest<[String: Int]>(
        .post("uploads", body: .multipart([.file("file", at: URL(fileURLWithPath: file))]))))
    guard (answer["bytes"] ?? 0) > 0 else { throw BenchError("the sink read nothing") }
  }

  /// Runs `body` on a thread of its own, so a blocking wait holds no thread of the pool the
  /// loopback server answers on.
  static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
      Thread { continuation.resume(with: Result { try body() }) }.start()
    }
  }
}
