import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Store
import Testing

/// Set in the child process that `aWriterKilledMidTransactionLeavesOldOrNewData` starts.
private let writerChildFile = ProcessInfo.processInfo.environment["KERNEL_WRITER_CHILD_DB"]

@Suite struct KilledWriterTests {
  /// Ten thousand movies, all named for one round, so a reader can tell which write it sees.
  private static func batch(round: Int) throws -> [Movie] {
    try (1...10_000).map { id in try Movie.fixture(id, "Movie \(id) round \(round)", grossing: id) }
  }

  /// Not a test on its own: the child of the test below, storing answer after answer until killed.
  @Test(.enabled(if: writerChildFile != nil))
  func writerChild() async throws {
    let store = try SQLiteCacheStore.open(at: URL(fileURLWithPath: writerChildFile ?? ""))
    for round in 1... {
      let payload = try CacheCodec<[Movie]>.json.encode(try Self.batch(round: round))
      try await store.store(
        CacheEntry(key: "movies/all", payload: payload, storedAt: Date()))
      FileHandle.standardOutput.write(Data("KERNEL-CHILD: committed \(round)\n".utf8))
    }
  }

  @Test(.enabled(if: writerChildFile == nil), .timeLimit(.minutes(1)))
  func aWriterKilledMidTransactionLeavesOldOrNewData() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    _ = try SQLiteCacheStore.open(at: folder.cache)

    let child = try await ChildProcess(
      URL(fileURLWithPath: ProcessInfo.processInfo.arguments[0]),
      arguments: ["--testing-library", "swift-testing", "--filter", "writerChild"],
      environment: ProcessInfo.processInfo.environment.merging([
        "KERNEL_WRITER_CHILD_DB": folder.cache.path
      ]) { $1 }, stderr: .null)
    let output = try #require(child.standardOutput)
    // Kill it while it writes the third answer of ten thousand movies: the second is committed.
    let seen = await lines(of: output, until: "KERNEL-CHILD: committed 2")
    child.send(SIGKILL)
    await child.exited()
    #expect(seen.contains("KERNEL-CHILD: committed 2"))
    #expect(child.terminationReason == .uncaughtSignal)

    let store = try SQLiteCacheStore.open(at: folder.cache)
    let queue = try DatabaseQueue(path: folder.cache.path)
    let integrity = try await queue.read { db in
      try String.fetchOne(db, sql: "PRAGMA integrity_check")
    }
    #expect(integrity == "ok")
    let stored = try #require(try await store.entry(for: "movies/all"))
    let movies = try CacheCodec<[Movie]>.json.decode(stored.payload)
    #expect(movies.count == 10_000)
    let rounds = Set(movies.compactMap { $0.name.split(separator: " ").last.map(String.init) })
    #expect(rounds.count == 1, "a mix of rounds: \(rounds)")
  }

  /// The lines `handle` gives until one equals `last`, read off the cooperative pool.
  private func lines(of handle: FileHandle, until last: String) async -> [String] {
    await onThreadOfItsOwn {
      var buffer = ""
      var lines: [String] = []
      while true {
        let data = handle.availableData
        if data.isEmpty { break }
        buffer += String(decoding: data, as: UTF8.self)
        while let newline = buffer.firstIndex(of: "\n") {
          let line = String(buffer[..<newline])
          buffer.removeSubrange(...newline)
          lines.append(line)
          if line == last { return lines }
        }
      }
      return lines
    }
  }
}
