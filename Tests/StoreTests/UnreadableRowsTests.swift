import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import Store
import Testing

/// Rows another program wrote into the cache file: a row that cannot be read is a miss with one
/// warning, never a crash, and the statistics count it without dating anything by it.
@Suite struct UnreadableRowsTests {
  private func entry(_ key: String, _ text: String, at seconds: TimeInterval) -> CacheEntry {
    CacheEntry(
      key: key, payload: Data(text.utf8), storedAt: Date(timeIntervalSince1970: seconds),
      validators: CacheValidators(etag: "\"\(text)\""))
  }

  @Test func aRowWithABadStoredAtOrPayloadIsAMissWithOneWarning() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let warnings = Recorder<String>()
    let store = try SQLiteCacheStore.open(at: folder.cache, warn: { warnings.append($0) })
    let bad: [(String, String)] = [
      ("future", "storedAt = 1e19"), ("past", "storedAt = -1e300"),
      ("text", "storedAt = 'yesterday'"), ("null", "storedAt = 'NaN'"),
      ("payload", "payload = 42"),
    ]
    for (key, _) in bad { try await store.store(entry(key, "v", at: 1_000)) }
    try await store.store(entry("good", "g", at: 2_000))
    let outside = try DatabaseQueue(path: folder.cache.path)
    for (key, change) in bad {
      try await outside.write { db in
        try db.execute(sql: "UPDATE cache_entry SET \(change) WHERE key = ?", arguments: [key])
      }
    }
    for (key, _) in bad {
      #expect(try await store.entry(for: key) == nil, "\(key)")
      #expect(try await store.entry(for: key) == nil, "\(key)")
    }
    #expect(try await store.entry(for: "good")?.payload == Data("g".utf8))
    #expect(warnings.all.count == bad.count, "\(warnings.all)")
    #expect(warnings.all.contains { $0.contains("future") && $0.contains("1e+19") })
    #expect(warnings.all.contains { $0.contains("text \"yesterday\"") })

    let statistics = try await store.statistics()
    #expect(statistics.entries == bad.count + 1)
    #expect(statistics.oldest == Date(timeIntervalSince1970: 1_000))
    #expect(statistics.newest == Date(timeIntervalSince1970: 2_000))

    // The next answer replaces a bad row.
    try await store.store(entry("text", "fresh", at: 3_000))
    #expect(try await store.entry(for: "text")?.payload == Data("fresh".utf8))
  }

  /// A list's rows read together (one statement for many keys, read straight from SQLite):
  /// each at its own position, a key asked twice given twice, a missing or damaged row nil.
  @Test(arguments: [3, 100, 700])
  func rowsReadTogetherComeBackAtTheirPositions(count: Int) async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let warnings = Recorder<String>()
    let store = try SQLiteCacheStore.open(at: folder.cache, warn: { warnings.append($0) })
    let stored = (0..<count).map { entry("k\($0)", "v\($0)", at: 1_000 + Double($0)) }
    try await store.store(stored)
    try await DatabaseQueue(path: folder.cache.path).write { db in
      try db.execute(sql: "UPDATE cache_entry SET payload = 'text' WHERE key = 'k1'")
    }
    let keys = ["k2", "k1", "missing", "k0", "k2"] + (3..<count).reversed().map { "k\($0)" }
    let read = try await store.entries(for: keys)
    #expect(read.count == keys.count)
    for (key, entry) in zip(keys, read) {
      switch key {
      case "k1", "missing": #expect(entry == nil, "\(key)")
      default:
        let index = Int(key.dropFirst()) ?? -1
        #expect(entry?.key == key && entry?.payload == Data("v\(index)".utf8), "\(key)")
        #expect(entry?.validators.etag == "\"v\(index)\"")
        #expect(entry?.storedAt == Date(timeIntervalSince1970: 1_000 + Double(index)))
      }
    }
    #expect(warnings.all.count == 1 && warnings.all[0].contains("k1"), "\(warnings.all)")
  }

  /// Lookups from many tasks at once all get their own answers.
  @Test func concurrentLookupsGetTheirOwnEntries() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    do {
      let store = try SQLiteCacheStore.open(at: folder.cache)
      for index in 0..<50 { try await store.store(entry("k\(index)", "v\(index)", at: 1)) }
    }
    let store = try SQLiteCacheStore.open(at: folder.cache)
    let wrong = try await withThrowingTaskGroup(of: Bool.self) { group in
      for round in 0..<400 {
        group.addTask {
          let index = round % 50
          return try await store.entry(for: "k\(index)")?.payload != Data("v\(index)".utf8)
        }
      }
      return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
    }
    #expect(wrong == 0)
  }
}

/// Files in the cache's place that are not files, and a cache locked while a command runs on it.
@Suite struct CacheFileKindsTests {
  @Test(arguments: ["cache.sqlite", "cache.sqlite-shm", "cache.sqlite-wal"])
  func aFIFOInTheCachesPlaceIsSaidAsSuchNotAsAFullDisk(name: String) async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    if name != "cache.sqlite" { _ = try SQLiteCacheStore.open(at: folder.cache) }
    let path = folder.appending(name).path
    unlink(path)
    #expect(mkfifo(path, 0o600) == 0)
    #expect {
      try SQLiteCacheStore.open(at: folder.cache)
    } throws: { error in
      let text = "\(error)"
      return text.contains("is a FIFO") && !text.contains("disk is full")
        && ServiceFailure.of(error) == .configuration
    }
  }

  /// A link in the place of the cache, the outbox or either's `-wal` or `-shm` is refused,
  /// naming where it leads, and the database it leads to is left untouched: SQLite would open
  /// it and write Kernel's tables into it.
  @Test(arguments: ["cache", "outbox"], ["", "-wal", "-shm"])
  func aLinkInTheStoresPlaceIsRefusedAndWhatItLeadsToUntouched(
    store: String, suffix: String
  ) async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let other = folder.appending("other.db")
    let queue = try DatabaseQueue(path: other.path)
    try await queue.write { db in try db.execute(sql: "CREATE TABLE mine (x)") }
    try queue.close()
    let before = try Data(contentsOf: other)
    let file = folder.appending("\(store).sqlite")
    #expect(symlink(other.path + suffix, file.path + suffix) == 0)
    #expect {
      if store == "cache" {
        _ = try SQLiteCacheStore.open(at: file)
      } else {
        _ = try SQLiteOutboxStore.open(at: file)
      }
    } throws: { error in
      let text = "\(error)"
      return text.contains("is a symbolic link (to \(other.path + suffix))")
        && ServiceFailure.of(error) == .configuration
    }
    #expect(try Data(contentsOf: other) == before)
    #expect(!FileManager.default.fileExists(atPath: other.path + "-wal"))
  }

  @Test func clearingACacheAnotherProcessLockedIsTheCachesFailure() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(at: folder.cache, busyTimeout: .milliseconds(50))
    var configuration = Configuration()
    configuration.allowsUnsafeTransactions = true
    let holder = try DatabaseQueue(path: folder.cache.path, configuration: configuration)
    try holder.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
    defer { try? holder.inDatabase { db in try db.execute(sql: "ROLLBACK") } }
    await #expect {
      _ = try await store.clear()
    } throws: { error in
      ServiceFailure.of(error) == .configuration && "\(error)".contains("locked")
        && "\(error)".contains("wait for the other process")
    }
  }
}
