import Foundation
import GRDB
import KernelTesting
import Store
import Synchronization
import Testing

@Suite struct CacheDatabaseTests {
  @Test func theCacheIsOneFileInWALMode() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    _ = try CacheDatabase.open(at: folder.cache)
    let mode = try DatabaseQueue(path: folder.cache.path).read { db in
      try String.fetchOne(db, sql: "PRAGMA journal_mode")
    }
    #expect(mode == "wal")
  }

  @Test func aFileThatIsNotADatabaseIsMovedAsideWithAWarning() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    try Data(repeating: 0x42, count: 8192).write(to: folder.cache)
    let context = folder.url.appendingPathComponent("context.json")
    let saved = Data(#"{"environment": "local", "tokens": {}}"#.utf8)
    try saved.write(to: context)
    let warnings = Recorder<String>()

    let store = MovieStore(
      database: try CacheDatabase.open(at: folder.cache, warn: warnings.append))
    try store.store([try movie(1, "After the damage")])
    #expect(try store.count() == 1)
    #expect(warnings.all.count == 1)
    #expect(warnings.all.first?.contains("was damaged") == true)
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(files.contains { $0.hasPrefix("cache.sqlite.corrupt-") })
    #expect(try Data(contentsOf: context) == saved)  // the saved context is another file, untouched
  }

  @Test func aDatabaseFromANewerSchemaIsRefusedAndLeftAlone() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let store = MovieStore(database: try CacheDatabase.open(at: folder.cache))
    try store.store([try movie(1, "Keep me")])
    try DatabaseQueue(path: folder.cache.path).write { db in
      try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v9: from the future')")
    }
    let error = #expect(throws: StoreError.self) { try CacheDatabase.open(at: folder.cache) }
    guard case .newerSchema(let file, let unknown) = error else {
      Issue.record("expected newerSchema, got \(String(describing: error))")
      return
    }
    #expect(file == folder.cache.path)
    #expect(unknown == ["v9: from the future"])
    let kept = try DatabaseQueue(path: folder.cache.path).read { db in
      try String.fetchOne(db, sql: "SELECT name FROM movie WHERE id = 1")
    }
    #expect(kept == "Keep me")
  }
}
