import Foundation
import KernelTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `kernel movies poster ID --output FILE` end to end: a download killed half-way with SIGKILL
/// is resumed by the next run, which asks for the rest only; an offline profile refuses it; and
/// `-v` shows each try's metrics.
@Suite(.timeLimit(.minutes(5))) struct DownloadEndToEndTests {
  static let length = 8_000_000

  /// A source of `length` bytes that holds its next answer after half of them, and the
  /// arguments that point `kernel` at it.
  static func heldHalfWay() throws -> (DownloadSource, [String]) {
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let source = try DownloadSource(settings)
    return (source, ["--environment", "local", "--base-url", source.baseURL.absoluteString])
  }

  /// Starts `movies poster ID --output FILE`, and kills it with SIGKILL once its partial file
  /// holds half of the body `source` (holding after half) sent; the bytes it kept.
  static func killedHalfWay(
    _ kernel: Kernel, _ source: DownloadSource, poster id: Int, to file: URL
  ) async throws -> Int {
    let local = ["--environment", "local", "--base-url", source.baseURL.absoluteString]
    let partial = file.deletingLastPathComponent()
      .appendingPathComponent(".\(file.lastPathComponent).partial")
    let running = try await kernel.launch(
      local + ["movies", "poster", "\(id)", "--output", file.path])
    await source.held()
    // What reached the client is written as it arrives; the kill comes once the file holds
    // some of it, so the next run has something to resume.
    let deadline = ContinuousClock.now + .seconds(30)
    while Self.size(partial) < Self.length / 2 && ContinuousClock.now < deadline {
      await Task.yield()
    }
    running.process.send(SIGKILL)
    _ = try await running.finish(within: .seconds(10))
    #expect(running.process.terminationReason == .uncaughtSignal)
    source.release()
    return Self.size(partial)
  }

  @Test func aDownloadKilledHalfWayIsResumedByTheNextRun() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let (source, local) = try Self.heldHalfWay()
    let file = kernel.workingDirectory.appendingPathComponent("poster.bin")
    let partial = kernel.workingDirectory.appendingPathComponent(".poster.bin.partial")

    let kept = try await Self.killedHalfWay(kernel, source, poster: 1, to: file)
    #expect(kept > 0 && kept <= Self.length / 2)
    #expect(!FileManager.default.fileExists(atPath: file.path))

    let again = try await kernel.run(
      local + ["movies", "poster", "1", "--output", file.path, "--format", "json"])
    #expect(again.status == 0, "\(again)")
    #expect(again.json?["status"] as? Int == 206, "\(again)")
    #expect(source.requests.last?["range"] == "bytes=\(kept)-")
    #expect(Double(source.bytesSent) <= 1.1 * Double(Self.length), "\(source.bytesSent)")
    #expect(try Data(contentsOf: file) == source.body())
    #expect(!FileManager.default.fileExists(atPath: partial.path))
  }

  /// A partial file left by poster 3 is not continued as poster 4's, though the server gives
  /// both the same ETag: the resume record names the URL it was for, and poster 4 starts over.
  @Test func aPartialFileOfAnotherPosterIsStartedOverNotContinued() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let (source, local) = try Self.heldHalfWay()
    let file = kernel.workingDirectory.appendingPathComponent("poster.bin")
    #expect(try await Self.killedHalfWay(kernel, source, poster: 3, to: file) > 0)

    let other = try await kernel.run(
      local + ["movies", "poster", "4", "--output", file.path, "--format", "json"])
    #expect(other.status == 0, "\(other)")
    #expect(other.json?["status"] as? Int == 200, "\(other)")
    #expect(source.requests.last?["range"] == nil, "\(source.requests)")
    #expect(source.requests.last?["if-range"] == nil, "\(source.requests)")
    #expect(try Data(contentsOf: file) == source.body())
  }

  /// Two runs writing one output: the second says another download of it is under way (exit
  /// 74, nothing asked of the server), and the first's bytes are what the file holds.
  @Test func aSecondRunWritingTheSameOutputIsRefusedWhileTheFirstWritesIt() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let (source, local) = try Self.heldHalfWay()
    let file = kernel.workingDirectory.appendingPathComponent("poster.bin")
    let first = try await kernel.launch(
      local + ["movies", "poster", "3", "--output", file.path])
    defer { first.process.send(SIGKILL) }
    await source.held()

    let second = try await kernel.run(local + ["movies", "poster", "4", "--output", file.path])
    #expect(second.status == 74, "\(second)")
    #expect(second.stderr.split(separator: "\n").count == 1, "\(second)")
    #expect(second.stderr.contains("another download of it is under way"), "\(second)")
    #expect(source.requests.count == 1, "\(source.requests)")
    source.release()
    let done = try await first.finish(within: .seconds(30))
    #expect(done.status == 0, "\(done)")
    #expect(try Data(contentsOf: file) == source.body())
  }

  @Test func filesAreTheUsersAPlantedLinkIsRefusedAndADeviceOrPipeIsWrittenInPlace()
    async throws
  {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let source = try DownloadSource(DownloadSource.Settings(length: 100_000))
    let local = ["--environment", "local", "--base-url", source.baseURL.absoluteString]
    let folder = kernel.workingDirectory
    let victim = folder.appendingPathComponent("victim.txt")
    try Data("another file".utf8).write(to: victim)
    let files = FileManager.default

    // A link planted where the partial file goes: refused, the other file untouched.
    let partial = folder.appendingPathComponent(".p.png.partial")
    try files.createSymbolicLink(at: partial, withDestinationURL: victim)
    let planted = try await kernel.run(local + ["movies", "poster", "3", "--output", "p.png"])
    #expect(planted.status == 74, "\(planted)")
    #expect(planted.stderr.contains("is not a partial file a download made"), "\(planted)")
    #expect(try Data(contentsOf: victim) == Data("another file".utf8))
    #expect(try files.destinationOfSymbolicLink(atPath: partial.path) == victim.path)
    #expect(!files.fileExists(atPath: folder.appendingPathComponent("p.png").path))
    #expect(source.requests.isEmpty)

    // A destination that is a link, or a folder: refused before anything is asked.
    let link = folder.appendingPathComponent("link.png")
    try files.createSymbolicLink(at: link, withDestinationURL: victim)
    for output in ["link.png", ".", "missing/p.png"] {
      let run = try await kernel.run(local + ["movies", "poster", "3", "--output", output])
      #expect(run.status == 74, "\(output): \(run)")
      #expect(run.stderr.split(separator: "\n").count == 1, "\(run)")
    }
    #expect(try Data(contentsOf: victim) == Data("another file".utf8))
    #expect(source.requests.isEmpty)

    // A device and a pipe take the body as it comes, and stay what they are.
    let null = try await kernel.run(local + ["movies", "poster", "3", "--output", "/dev/null"])
    #expect(null.status == 0, "\(null)")
    #expect(null.stderr.contains("(100,000 bytes)"), "\(null)")
    var info = stat()
    #expect(lstat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    let fifo = folder.appendingPathComponent("fifo")
    #expect(mkfifo(fifo.path, 0o600) == 0)
    let reading = Task {
      try await onThreadOfItsOwn {
        let handle = try FileHandle(forReadingFrom: fifo)
        return try handle.readToEnd() ?? Data()
      }
    }
    let piped = try await kernel.run(local + ["movies", "poster", "3", "--output", fifo.path])
    #expect(piped.status == 0, "\(piped)")
    #expect(try await reading.value == source.body())
    #expect(lstat(fifo.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
  }

  /// A write the disk refuses, past the file-size limit (`ulimit -f`, as a full disk does) or
  /// under a name too long for the file system, exits 74 with one sentence naming the file,
  /// never a raw Foundation dump; nothing is left in the destination's place.
  /// `--output -` is standard output, whatever the shell made it: a file it opened for `>` (which
  /// `/dev/stdout`, a link, is not refused for either) or a pipe; the report goes to stderr, so
  /// the bytes are the poster's alone.
  @Test func aDashWritesThePosterToStandardOutputWhateverTheShellMadeIt() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let source = try DownloadSource(DownloadSource.Settings(length: 300_000))
    let local = "--environment local --base-url \(source.baseURL.absoluteString)"
    let folder = kernel.workingDirectory
    for (output, redirect) in [
      ("-", "> file.bin"), ("/dev/stdout", "> link.bin"), ("-", "| cat > piped.bin"),
    ] {
      let run = try await kernel.shell("$KERNEL \(local) movies poster 3 -o \(output) \(redirect)")
      #expect(run.status == 0, "\(run)")
      #expect(
        run.stderr == "Wrote the poster of movie 3 to /dev/stdout (300,000 bytes).\n", "\(run)")
      let name = redirect.split(separator: " ").last.map(String.init) ?? ""
      #expect(try Data(contentsOf: folder.appendingPathComponent(name)) == source.body(), "\(name)")
    }
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("-").path))
  }

  @Test func aWriteTheDiskRefusesExits74WithOneSentenceNamingTheFile() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let source = try DownloadSource(DownloadSource.Settings(length: 1_000_000))
    let local = ["--environment", "local", "--base-url", source.baseURL.absoluteString]
    let folder = kernel.workingDirectory

    let limited = try await kernel.run(
      local + ["movies", "poster", "3", "--output", "p.png"], fileSizeLimitKB: 100)
    #expect(limited.status == 74, "\(limited)")
    #expect(limited.stderr.split(separator: "\n").count == 1, "\(limited)")
    #expect(limited.stderr.contains(folder.appendingPathComponent("p.png").path), "\(limited)")
    #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("p.png").path))

    let long = String(repeating: "n", count: 250) + ".png"
    let named = try await kernel.run(local + ["movies", "poster", "3", "--output", long])
    #expect(named.status == 74, "\(named)")
    #expect(named.stderr.split(separator: "\n").count == 1, "\(named)")
    #expect(named.stderr.contains(long), "\(named)")
  }

  @Test func aTerminalShowsAProgressBarAndAPipeShowsNothing() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let source = try DownloadSource(DownloadSource.Settings(length: 2_000_000))
    let local = ["--environment", "local", "--base-url", source.baseURL.absoluteString]
    let terminal = try PseudoTerminal()
    let running = try await kernel.launch(
      local + ["movies", "poster", "2", "--output", "shown.bin"], terminal: terminal)
    let run = try await running.finish(within: .seconds(60))
    let shown = await onThreadOfItsOwn { terminal.text() }
    #expect(run.status == 0, "\(shown)")
    #expect(shown.contains("the poster of movie 2: [####################] 2.0 MB of 2.0 MB (100%)"))

    let piped = try await kernel.run(local + ["movies", "poster", "2", "--output", "piped.bin"])
    #expect(piped.status == 0, "\(piped)")
    #expect(piped.stderr.isEmpty, "\(piped)")
    #expect(piped.stdout.hasPrefix("Saved the poster of movie 2 to "), "\(piped)")
  }

  @Test func anOfflineProfileRefusesADownloadWithTheUsualSentence() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(["--profile", "offline", "movies", "poster", "1", "-o", "p.bin"])
    #expect(run.status == 69, "\(run)")
    #expect(
      run.stderr.contains(
        "the offline profile does not ask the api; run it with a network profile"),
      "\(run)")
  }

  @Test func verboseShowsEveryTryWithItsMetricsInWords() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let server = try await Server(kernel, ["--fail-first", "1"])
    defer { server.terminate() }
    let run = try await kernel.run(
      ["-v", "--environment", "local", "--base-url", server.baseURL, "movies", "get", "2"])
    #expect(run.status == 0, "\(run)")
    let tries = run.stderr.split(separator: "\n").filter { $0.contains("GET http") }
    // The 503 and its retry: two lines, each with the connect time, the time to the first
    // byte and the bytes each way.
    #expect(tries.count == 2, "\(run)")
    #expect(tries.first?.contains("→ 503 in ") == true && tries.last?.contains("→ 200 in ") == true)
    for line in tries {
      #expect(line.contains("connected in ") && line.contains("first byte after "), "\(line)")
      #expect(line.contains(" B sent, ") && line.contains(" received"), "\(line)")
    }
  }

  static func size(_ file: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int) ?? 0
  }
}
