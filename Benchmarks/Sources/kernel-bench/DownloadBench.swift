import Api
import Dispatch
import Foundation
import KernelTesting

/// `http.download_512m`: 512 MiB from a loopback server to a file, by `ApiClient.download` in a
/// process of its own (`kernel-bench download-once`, its peak resident memory read by GNU
/// time) and by `curl -o` on the same server, interleaved, medians of five. The server is
/// `DownloadSource` (plain sockets, the body made once), the same for both. The same work on
/// both sides: a download is on disk before it is moved into place (`fsync`), so curl's file is
/// synced too (`sync FILE`) within its time; without it curl's figure is the page cache's, not
/// the disk's (833 MB/s against 372 for Kernel's synced file, on a disk that writes 580).
/// Budgets: kernel_mb_s at least 0.8x curl_mb_s, peak_mb at most 64.
enum DownloadBench {
  static let length = 512 << 20
  /// Five, or three when quick: one run of each is no median, and a disk-bound download's
  /// single run ranged from 0.76x to 3.1x curl's throughput on one quiet machine.
  static let runs = Runs.quick ? 3 : 5

  static func run() async throws {
    guard let curl = CliBench.which("curl") else {
      print("kernel-bench: http: the curl tool is not installed; install curl to compare")
      return
    }
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-bench-download-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    guard let sync = CliBench.which("sync") else {
      throw BenchError("the sync tool is not installed (coreutils)")
    }
    let time = "/usr/bin/time"
    guard FileManager.default.isExecutableFile(atPath: time) else {
      throw BenchError("GNU time is not installed (apt-get install time)")
    }
    let source = try DownloadSource(DownloadSource.Settings(length: length))
    let url = source.baseURL.appendingPathComponent("poster").absoluteString
    let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let file = work.appendingPathComponent("poster.bin")
    var ours: [Double] = []
    var theirs: [Double] = []
    var peaks: [Double] = []
    for run in 0..<runs {
      let report = work.appendingPathComponent("peak-\(run)")
      var start = DispatchTime.now().uptimeNanoseconds
      let status = try await MemoryBench.onThread {
        try CliBench.spawn(
          time, ["-f", "%M", "-o", report.path, program, "download-once", url, file.path])
      }
      ours.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
      guard status == 0 else { throw BenchError("download-once exited \(status)") }
      guard try Self.size(file) == length else { throw BenchError("the download is not whole") }
      try FileManager.default.removeItem(at: file)
      let kilobytes = try String(contentsOf: report, encoding: .utf8)
        .split(whereSeparator: \.isNewline).last.flatMap { Double($0) }
      guard let kilobytes else { throw BenchError("time wrote no peak for the download") }
      peaks.append(kilobytes * 1024 / 1e6)

      start = DispatchTime.now().uptimeNanoseconds
      let fetched = try await MemoryBench.onThread {
        let status = try CliBench.spawn(curl, ["--silent", "--fail", "--output", file.path, url])
        return status == 0 ? try CliBench.spawn(sync, [file.path]) : status
      }
      theirs.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
      guard fetched == 0, try Self.size(file) == length else {
        throw BenchError("curl could not download and sync the file (exit \(fetched))")
      }
      try FileManager.default.removeItem(at: file)
    }
    let megabytes = Double(length) / 1e6
    let kernel = megabytes / median(ours)
    let reference = megabytes / median(theirs)
    let peak = median(peaks)
    print(
      "http.download_512m kernel_mb_s=\(Int(kernel)) curl_mb_s=\(Int(reference))"
        + " peak_mb=\(String(format: "%.1f", peak))")
    let ratio = reference > 0 ? kernel / reference : 0
    print(
      ratio >= 0.8 && peak <= 64
        ? "# budgets: met (\(String(format: "%.2f", ratio))x curl's throughput, at least 0.8x;"
          + " peak at most 64 MB)"
        : "# budgets missed: \(String(format: "%.2f", ratio))x curl's throughput (at least 0.8x),"
          + " peak \(String(format: "%.1f", peak)) MB (at most 64)")
  }

  /// `kernel-bench download-once URL FILE`: downloads URL to FILE and exits.
  static func once(_ url: String, _ file: String) async throws {
    guard let target = URL(string: url) else { throw BenchError("not a URL: \(url)") }
    let base = target.deletingLastPathComponent()
    let client = ApiClient(
      context: InMemoryApiContext(environment: try ApiEnvironment(name: "local", baseURL: base)),
      transport: PlatformTransport(), retriers: [])
    _ = try await client.download(
      .get(target.lastPathComponent), to: URL(fileURLWithPath: file))
  }

  static func size(_ file: URL) throws -> Int {
    (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
  }
}
