import Dispatch
import Domain
import Foundation
import Layers
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// `kernel-bench observe`: how soon a watcher sees another process's commit (the `sqlite3`
/// tool writing the watched file, 200 commits (50 with `--quick`), each timed from its write to
/// the watcher's new element; budget p99 ≤ 250 ms), and what watching costs while nothing
/// changes (10 watchers, each on a store of its own, over 10 s (2.5 s with `--quick`), in percent
/// of one core; budget < 1).
enum ObserveBench {
  static func run() async throws {
    let folder = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-bench-observe-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    try await crossProcess(in: folder)
    try await idle(in: folder)
  }

  /// A watched entry and the `sqlite3` tool, in another process, changing it 200 times.
  static func crossProcess(in folder: URL) async throws {
    let file = folder.appendingPathComponent("cache.sqlite")
    let store = try SQLiteCacheStore.open(at: file)
    let call = ServiceCall<Int>(name: "count", key: "count", summary: "the count")
    let stack = ServiceStack(client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly)])
    try await store.store(
      CacheEntry(key: "count", payload: Data("0".utf8), storedAt: Date()))
    guard var elements = stack.watch(call, refresh: false)?.makeAsyncIterator() else {
      throw BenchError("a stack with a caching layer has nothing to watch")
    }
    _ = await elements.next()

    guard let sqlite3 = CliBench.which("sqlite3") else {
      throw BenchError("sqlite3 is not installed")
    }
    let writer = Process()
    writer.executableURL = URL(fileURLWithPath: sqlite3)
    writer.arguments = [file.path]
    let input = Pipe()
    writer.standardInput = input
    writer.standardOutput = FileHandle.nullDevice
    try writer.run()
    defer {
      try? input.fileHandleForWriting.close()
      writer.waitUntilExit()
    }
    var delays: [Double] = []
    for count in 1...Runs.sampled(200) {
      let start = DispatchTime.now().uptimeNanoseconds
      let sql = "UPDATE cache_entry SET payload = CAST('\(count)' AS BLOB) WHERE key = 'count';\n"
      try input.fileHandleForWriting.write(contentsOf: Data(sql.utf8))
      while let element = await elements.next() {
        if element.value == count { break }
      }
      delays.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
    }
    let sorted = delays.sorted()
    let p99 = sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
    print(
      "observe.cross_process median_ms=\(String(format: "%.1f", median(delays)))"
        + " p99_ms=\(String(format: "%.1f", p99))")
    print(
      p99 <= 250
        ? "# budget: met (another process's commit reaches the watcher, p99 at most 250 ms)"
        : "# budget missed: p99 \(String(format: "%.1f", p99)) ms (budget 250 ms)")
  }

  /// Ten watchers, each on a store of its own, and nothing changing for 10 s (a quarter of that
  /// with `--quick`): this process's CPU time over that time.
  static func idle(in folder: URL) async throws {
    var watching: [Task<Void, Never>] = []
    for index in 0..<10 {
      let store = try SQLiteCacheStore.open(
        at: folder.appendingPathComponent("idle-\(index).sqlite"))
      let stack = ServiceStack(
        client: nil, layers: [CachingLayer(store: store, policy: .cacheOnly)])
      let call = ServiceCall<Int>(name: "count", key: "count", summary: "the count")
      guard let watch = stack.watch(call, refresh: false) else {
        throw BenchError("a stack with a caching layer has nothing to watch")
      }
      watching.append(Task { for await element in watch { blackHole(element) } })
    }
    try await Task.sleep(for: .milliseconds(500))
    let before = cpuSeconds()
    let start = DispatchTime.now().uptimeNanoseconds
    try await Task.sleep(for: .milliseconds(Runs.sampled(10_000)))
    let used = cpuSeconds() - before
    let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    for task in watching { task.cancel() }
    let percent = used / wall * 100
    print("observe.idle_cpu pct=\(String(format: "%.2f", percent))")
    print(
      percent < 1
        ? "# budget: met (10 idle watchers under 1% of a core)"
        : "# budget missed: 10 idle watchers \(String(format: "%.2f", percent))% of a core")
  }

  /// This process's user and system CPU time so far.
  static func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
  }
}
