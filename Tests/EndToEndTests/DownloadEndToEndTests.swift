import Foundation
import KernelTesting
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `kernel movies poster ID --output FILE` end to end: a download killed half-way with SIGKILL
/// is resumed by the next run, which asks for the rest only; an offline profile refuses it.
@Suite(.timeLimit(.minutes(2))) struct DownloadEndToEndTests {
  static let length = 8_000_000

  @Test func aDownloadKilledHalfWayIsResumedByTheNextRun() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let source = try DownloadSource(settings)
    let local = ["--environment", "local", "--base-url", source.baseURL.absoluteString]
    let file = kernel.workingDirectory.appendingPathComponent("poster.bin")
    let partial = kernel.workingDirectory.appendingPathComponent(".poster.bin.partial")

    let running = try kernel.launch(local + ["movies", "poster", "1", "--output", file.path])
    await source.held()
    // What reached the client is written as it arrives; the kill comes once the file holds
    // some of it, so the next run has something to resume.
    let deadline = ContinuousClock.now + .seconds(30)
    while Self.size(partial) == 0 && ContinuousClock.now < deadline { await Task.yield() }
    running.process.send(SIGKILL)
    _ = try await running.finish(within: .seconds(10))
    #expect(running.process.terminationReason == .uncaughtSignal)
    source.release()
    let kept = Self.size(partial)
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

  static func size(_ file: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? Int) ?? 0
  }
}
