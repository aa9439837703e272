import Dispatch
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// `kernel-bench cli`: the whole `kernel --profile offline movies top-grossing --year 2016
/// --format json` process against the `sqlite3` tool running the same query on the same file and
/// against the floor of any Swift process here (imports Foundation, prints one encoded JSON
/// object), medians of interleaved runs, each from spawn to exit. Budget: kernel within 3x the
/// floor.
///
/// The kernel binaries: `KERNEL_BIN` (default `.build/release/kernel`) and `KERNEL_STATIC_BIN`
/// (default `.build-static/release/kernel`, from `swift build -c release --static-swift-stdlib
/// --scratch-path .build-static`); each is built here when missing. When both name one file (CI
/// builds kernel static only, as the README installs it), it runs once, as `kernel_ms`, and is
/// judged against the floor linked as it is, the static one.
enum CliBench {
  static let rounds = 25

  static func run() throws {
    let work = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-bench-cli-\(ProcessInfo.processInfo.processIdentifier)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }

    let kernel = try binary("KERNEL_BIN", ".build/release/kernel", build: [])
    let staticKernel = try? binary(
      "KERNEL_STATIC_BIN", ".build-static/release/kernel",
      build: ["--static-swift-stdlib", "--scratch-path", ".build-static"])
    let floor = try compileFloor(in: work, static: false)
    let staticFloor = try? compileFloor(in: work, static: true)
    guard let sqlite3 = which("sqlite3") else {
      throw BenchError("sqlite3 is not installed (apt-get install sqlite3)")
    }

    let data = work.appendingPathComponent("data")
    let fill = try launch(
      kernel.path, ["--data-dir", data.path, "movies", "top-grossing", "--year", "2016"], in: work)
    guard fill == 0 else { throw BenchError("kernel could not fill the cache (exit \(fill))") }
    let database = data.appendingPathComponent("cache.sqlite").path
    let command = [
      "--profile", "offline", "--data-dir", data.path, "movies", "top-grossing", "--year", "2016",
      "--format", "json",
    ]
    var contenders: [(String, String, [String])] = [
      ("kernel_ms", kernel.path, command),
      ("sqlite3_cli_ms", sqlite3, ["-json", database, query]),
      ("swift_floor_ms", floor.path, []),
    ]
    let onlyStatic = staticKernel?.resolvingSymlinksInPath() == kernel.resolvingSymlinksInPath()
    if let staticKernel, !onlyStatic {
      contenders.append(("kernel_static_ms", staticKernel.path, command))
    }
    if let staticFloor { contenders.append(("swift_static_floor_ms", staticFloor.path, [])) }
    for contender in contenders {
      let status = try launch(contender.1, contender.2, in: work)
      guard status == 0 else { throw BenchError("\(contender.1) exited \(status)") }
    }

    // Timed runs start from the work folder (so no Config/kernel.yaml is found there), through
    // posix_spawn and a blocking waitpid: Foundation's Process waits on a run loop and a
    // thread of its own, which share the two cores with a contender that uses both.
    let home = FileManager.default.currentDirectoryPath
    guard FileManager.default.changeCurrentDirectoryPath(work.path) else {
      throw BenchError("cannot enter \(work.path)")
    }
    defer { _ = FileManager.default.changeCurrentDirectoryPath(home) }
    var samples = Array(repeating: [Double](), count: contenders.count)
    for _ in 0..<rounds {
      for (index, contender) in contenders.enumerated() {
        let start = DispatchTime.now().uptimeNanoseconds
        let status = try spawn(contender.1, contender.2)
        samples[index].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        guard status == 0 else { throw BenchError("\(contender.1) exited \(status)") }
      }
    }
    let medians = samples.map(median)
    let fields = zip(contenders, medians).map { "\($0.0)=\(String(format: "%.1f", $1))" }
    print("cli.offline_top_grossing \(fields.joined(separator: " "))")
    if staticKernel == nil {
      print("# kernel_static_ms: the static build failed; it needs libcurl4-openssl-dev")
    }
    // The floor linked as the kernel is: the static one when the kernel is static.
    let floorKey = onlyStatic ? "swift_static_floor_ms" : "swift_floor_ms"
    guard let floorIndex = contenders.firstIndex(where: { $0.0 == floorKey }) else {
      throw BenchError("the static Swift floor could not be built; kernel is static here")
    }
    let ratio = medians[0] / medians[floorIndex]
    let judged = "kernel \(String(format: "%.1f", ratio))x the Swift floor (\(floorKey))"
    print(
      ratio <= 3 ? "# budget: met (\(judged); budget 3x)" : "# budget missed: \(judged) (budget 3x)"
    )
    try manyIds(kernel, data: data, in: work)
  }

  /// `movies get` with 100,000 ids against the same with one, both refused for
  /// `--concurrency 0` once parsed: the difference is the parsing. A figure; no budget.
  static func manyIds(_ kernel: URL, data: URL, in work: URL) throws {
    let base = ["--profile", "offline", "--data-dir", data.path, "movies", "get"]
    let many = base + (1...100_000).map(String.init) + ["--concurrency", "0"]
    let one = base + ["1", "--concurrency", "0"]
    var samples: [[Double]] = [[], []]
    for _ in 0..<5 {
      for (index, arguments) in [many, one].enumerated() {
        let start = DispatchTime.now().uptimeNanoseconds
        let status = try launch(kernel.path, arguments, in: work)
        guard status == 64 else { throw BenchError("kernel movies get exited \(status), not 64") }
        samples[index].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
      }
    }
    let (manyMs, oneMs) = (median(samples[0]), median(samples[1]))
    print(
      "cli.movies_get_ids ids_100000_ms=\(String(format: "%.1f", manyMs)) ids_1_ms=\(String(format: "%.1f", oneMs))"
    )
    let parsing = manyMs - oneMs
    print("# 100,000 ids parsed in \(Int(parsing)) ms; no budget")
  }

  /// The sqlite3 tool's equivalent of the command: the stored answer of that call (the year's
  /// ten highest grossing movies with their cast), as JSON.
  static let query = """
    SELECT json_object('origin', 'cache', 'movies', json(CAST(payload AS TEXT)))
    FROM cache_entry WHERE key = 'movies/topGrossing/2016';
    """

  /// The binary named by `variable`, else at `path`, built with `swift build` when missing.
  static func binary(_ variable: String, _ path: String, build flags: [String]) throws -> URL {
    if let given = ProcessInfo.processInfo.environment[variable] {
      return URL(fileURLWithPath: given)
    }
    let url = URL(fileURLWithPath: path)
    if !FileManager.default.isExecutableFile(atPath: url.path) {
      print("# building \(path)")
      let status = try launch(
        which("swift") ?? "/usr/bin/swift",
        ["build", "-c", "release", "--product", "kernel"] + flags, in: nil, quiet: false)
      guard status == 0 else { throw BenchError("swift build \(flags) failed (exit \(status))") }
    }
    return url
  }

  /// A program that imports Foundation and prints one encoded JSON object, release build.
  static func compileFloor(in directory: URL, static isStatic: Bool) throws -> URL {
    let source = directory.appendingPathComponent("floor.swift")
    try """
    import Foundation
    struct Answer: Encodable { let origin: String; let movies: [Int] }
    let data = try JSONEncoder().encode(Answer(origin: "cache", movies: [1, 2, 3]))
    print(String(decoding: data, as: UTF8.self))
    """.write(to: source, atomically: true, encoding: .utf8)
    let output = directory.appendingPathComponent(isStatic ? "floor-static" : "floor")
    let status = try launch(
      which("swiftc") ?? "/usr/bin/swiftc",
      ["-O", source.path, "-o", output.path] + (isStatic ? ["-static-stdlib"] : []), in: directory)
    guard status == 0 else { throw BenchError("swiftc could not build the floor program") }
    return output
  }

  /// Runs `path` with `arguments`, output discarded, and waits for it; returns its exit status
  /// (128 + the signal when one ended it).
  static func spawn(_ path: String, _ arguments: [String]) throws -> Int32 {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for argument in argv { free(argument) } }
    var child: pid_t = 0
    let spawned = posix_spawn(&child, path, &actions, nil, argv, environ)
    guard spawned == 0 else { throw BenchError("cannot start \(path): errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    // The wait status as <sys/wait.h> lays it out: a signal number in the low 7 bits, else the
    // exit code in the next 8.
    let signal = status & 0x7f
    return signal != 0 ? 128 + signal : (status >> 8) & 0xff
  }

  static func which(_ tool: String) -> String? {
    let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
    return paths.map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
  }

  /// Runs a program to its end, output discarded unless `quiet` is false; returns its status.
  @discardableResult
  static func launch(_ path: String, _ arguments: [String], in directory: URL?, quiet: Bool = true)
    throws -> Int32
  {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    if let directory { process.currentDirectoryURL = directory }
    if quiet {
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
    }
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}

struct BenchError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
