import Domain
import Foundation
import GRDB
import KernelTesting
import Layers
import MoviesKit
import MoviesTesting
import Store
import Synchronization
import Testing

@Suite struct SQLiteCacheStoreTests {
  private func entry(_ key: String, _ text: String, at seconds: TimeInterval = 100) -> CacheEntry {
    CacheEntry(
      key: key, payload: Data(text.utf8), storedAt: Date(timeIntervalSince1970: seconds),
      validators: CacheValidators(etag: "\"\(text)\""))
  }

  @Test func theCacheIsOneFileInWALMode() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    _ = try SQLiteCacheStore.open(at: folder.cache)
    let mode = try DatabaseQueue(path: folder.cache.path).read { db in
      try String.fetchOne(db, sql: "PRAGMA journal_mode")
    }
    #expect(mode == "wal")
  }

  /// A new file gives freed pages back from the start; a run that only reads writes nothing
  /// (setting `auto_vacuum` again wrote and synced the header at every opening).
  @Test func aNewFileIsShrinkableAndReadingItWritesNothing() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    do {
      let store = try SQLiteCacheStore.open(at: folder.cache)
      try await store.store(entry("a", "first", at: Date().timeIntervalSince1970))
    }
    let vacuum = try await DatabaseQueue(path: folder.cache.path).read { db in
      try Int.fetchOne(db, sql: "PRAGMA auto_vacuum")
    }
    #expect(vacuum == 2)
    let log = URL(fileURLWithPath: folder.cache.path + "-wal")
    #expect(!FileManager.default.fileExists(atPath: log.path), "the last connection removes it")
    let reader = try SQLiteCacheStore.open(at: folder.cache)
    #expect(try await reader.entry(for: "a")?.payload == Data("first".utf8))
    let logged = try FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int
    #expect(logged == 0)
  }

  /// Two connections opening one new file at once (as two kernels do) race to migrate it:
  /// both must open it, whichever wins (the loser reads the schema afresh, not what it cached).
  @Test func twoConnectionsOpeningOneNewFileAtOnceBothOpenIt() throws {
    for round in 0..<40 {
      let folder = try TemporaryDirectory("store")
      defer { folder.remove() }
      let failures = Mutex<[String]>([])
      // Both opens at once, on two threads; returns when both are done.
      DispatchQueue.concurrentPerform(iterations: 2) { _ in
        do { _ = try SQLiteCacheStore.open(at: folder.cache) } catch {
          failures.withLock { $0.append("\(error)") }
        }
      }
      #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
    }
  }

  @Test func entriesAreKeptPerKeyAcrossOpeningsAndRenewedOnA304() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(at: folder.cache)
    try await store.store(entry("a", "first"))
    try await store.store(entry("b", "other"))
    try await store.store(entry("a", "second", at: 200))
    try await store.renew(
      "b", storedAt: Date(timeIntervalSince1970: 300), validators: CacheValidators(etag: "\"b2\""))

    let reopened = try SQLiteCacheStore.open(at: folder.cache)
    #expect(try await reopened.entry(for: "a") == entry("a", "second", at: 200))
    let renewed = try await reopened.entry(for: "b")
    #expect(renewed?.payload == Data("other".utf8))
    #expect(renewed?.storedAt == Date(timeIntervalSince1970: 300))
    #expect(renewed?.validators.etag == "\"b2\"")
    #expect(try await reopened.entry(for: "c") == nil)
    let stats = try await reopened.statistics()
    #expect(stats.entries == 2)
    #expect(stats.oldest == Date(timeIntervalSince1970: 200))
    #expect(try await reopened.clear() == 2)
    #expect(try await reopened.entry(for: "a") == nil)
  }

  @Test func aVersionOneFileLosesItsMovieTablesAndItsAnswersKeyedWithoutOrigin() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    // A file as the first schema left it: movie rows, and entries with and without a payload.
    let queue = try DatabaseQueue(path: folder.cache.path)
    try await queue.write { db in
      try db.execute(
        sql: """
          CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
          INSERT INTO grdb_migrations VALUES ('v1: movies, actors, cast, cache entries');
          CREATE TABLE movie (id INTEGER PRIMARY KEY, name TEXT NOT NULL, year INTEGER NOT NULL,
            releaseDate TEXT NOT NULL, grossing INTEGER NOT NULL, rating REAL NOT NULL,
            storedAt REAL NOT NULL);
          CREATE TABLE actor (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
          CREATE TABLE movie_cast (movieId INTEGER NOT NULL, position INTEGER NOT NULL,
            actorId INTEGER NOT NULL, PRIMARY KEY (movieId, position)) WITHOUT ROWID;
          CREATE TABLE cache_entry (key TEXT PRIMARY KEY, storedAt REAL NOT NULL, etag TEXT,
            lastModified TEXT, payload BLOB) WITHOUT ROWID;
          INSERT INTO movie VALUES (1, 'Finding Dory', 2016, '2016-06-17', 486, 77, 100);
          INSERT INTO cache_entry (key, storedAt, payload) VALUES ('movies/topGrossing/2016', 100, NULL);
          INSERT INTO cache_entry (key, storedAt, payload) VALUES ('books/1', 100, X'7B7D');
          """)
    }
    try queue.close()

    let store = try SQLiteCacheStore.open(at: folder.cache)
    #expect(try await store.entry(for: "movies/topGrossing/2016") == nil)
    // Keyed without the environment's origin, with dates not quite exact: it answers nothing.
    #expect(try await store.entry(for: "books/1") == nil)
    try await store.store(CacheEntry(key: "books/1", payload: Data("{}".utf8), storedAt: .now))
    #expect(try await store.entry(for: "books/1")?.payload == Data("{}".utf8))
    let tables = try await DatabaseQueue(path: folder.cache.path).read { db in
      try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    #expect(!tables.contains("movie") && tables.contains("cache_entry"))
  }

  @Test func aFileThatIsNotADatabaseIsMovedAsideWithAWarning() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.url, withIntermediateDirectories: true)
    try Data(repeating: 0x42, count: 8192).write(to: folder.cache)
    let context = folder.url.appendingPathComponent("context.json")
    let saved = Data(#"{"environment": "local", "tokens": {}}"#.utf8)
    try saved.write(to: context)
    let warnings = Recorder<String>()

    let store = try SQLiteCacheStore.open(at: folder.cache, warn: warnings.append)
    try await store.store(entry("a", "after the damage"))
    #expect(try await store.statistics().entries == 1)
    #expect(warnings.all.count == 1)
    #expect(
      warnings.all.first?.contains("was damaged (file is not a database); it was moved to") == true,
      "\(warnings.all)")
    let files = try FileManager.default.contentsOfDirectory(atPath: folder.url.path)
    #expect(files.contains { $0.hasPrefix("cache.sqlite.corrupt-") })
    #expect(try Data(contentsOf: context) == saved)  // the saved context is another file, untouched
  }

  @Test func aDatabaseFromANewerSchemaIsRefusedAndLeftAlone() async throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    try await SQLiteCacheStore.open(at: folder.cache).store(entry("a", "keep me"))
    try await DatabaseQueue(path: folder.cache.path).write { db in
      try db.execute(
        sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
    }
    let error = #expect(throws: StoreError.self) { try SQLiteCacheStore.open(at: folder.cache) }
    guard case .newerSchema(let file, let unknown) = error else {
      Issue.record("expected newerSchema, got \(String(describing: error))")
      return
    }
    #expect(file == folder.cache.path)
    #expect(unknown == ["v99: from the future"])
    #expect(error?.failure == .configuration)
    let kept = try await DatabaseQueue(path: folder.cache.path).read { db in
      try Data.fetchOne(db, sql: "SELECT payload FROM cache_entry WHERE key = 'a'")
    }
    #expect(kept == Data("keep me".utf8))
  }

  @Test func aDirectoryWhereTheFileShouldBeIsOneSentenceWithTheFix() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    try FileManager.default.createDirectory(at: folder.cache, withIntermediateDirectories: true)
    let error = #expect(throws: StoreError.self) { try SQLiteCacheStore.open(at: folder.cache) }
    #expect(
      error?.description
        == "The cache \(folder.cache.path) cannot be opened: it is a directory; remove it or choose another --data-dir."
    )
    #expect(error?.failure == .configuration)
  }

  @Test func anotherConnectionsExclusiveLockFailsTheOpeningWithTheCause() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    _ = try SQLiteCacheStore.open(at: folder.cache)
    var configuration = Configuration()
    configuration.allowsUnsafeTransactions = true  // the lock is held across accesses
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
    let holder = try DatabaseQueue(path: folder.cache.path, configuration: configuration)
    try holder.inDatabase { db in
      try db.execute(sql: "BEGIN EXCLUSIVE; DELETE FROM cache_entry;")
      let error = #expect(throws: StoreError.self) {
        try SQLiteCacheStore.open(at: folder.cache, busyTimeout: .milliseconds(50))
      }
      #expect(error?.description.contains("another process holds it locked") == true)
      try db.execute(sql: "ROLLBACK")
    }
  }
}

/// `cache.maxBytes` and `cache.maxAgeDays` on a real file.
@Suite struct CacheBudgetTests {
  private func entry(_ key: String, bytes: Int = 2_000, storedAt: Date = Date()) -> CacheEntry {
    CacheEntry(key: key, payload: Data(repeating: 0x41, count: bytes), storedAt: storedAt)
  }

  @Test func theLeastRecentlyUsedGoFirstAndTheFileKeepsWithinTheBudget() async throws {
    let folder = try TemporaryDirectory("budget")
    defer { folder.remove() }
    let budget: Int64 = 128 << 10
    let store = try SQLiteCacheStore.open(
      at: folder.cache, budget: SQLiteCacheStore.Budget(maxBytes: budget))
    for index in 0..<300 { try await store.store(entry("k\(index)")) }
    let stats = try await store.statistics()
    #expect(stats.entries > 10 && stats.entries < 300, "\(stats)")
    #expect(stats.bytes <= budget && stats.maxBytes == budget, "\(stats)")
    let size = try FileManager.default.attributesOfItem(atPath: folder.cache.path)[.size] as? Int
    #expect((size ?? .max) <= Int(budget))
    // The newest stays, the oldest went.
    #expect(try await store.entry(for: "k299") != nil)
    #expect(try await store.entry(for: "k0") == nil)
  }

  /// Making room that takes `reportsEvictionAfter` or longer is said, with how long it took
  /// and how many rows went: its time is not the api's. Room made sooner says nothing.
  @Test func slowEvictionIsSaidWithItsTimeAndRows() async throws {
    let folder = try TemporaryDirectory("budget")
    defer { folder.remove() }
    let said = Recorder<String>()
    let store = try SQLiteCacheStore.open(
      at: folder.cache,
      budget: SQLiteCacheStore.Budget(maxBytes: 128 << 10, reportsEvictionAfter: .zero),
      warn: { said.append($0) })
    try await store.store(entry("k0"))
    #expect(said.all.isEmpty)
    for index in 1..<100 { try await store.store(entry("k\(index)")) }
    let first = try #require(said.all.first)
    #expect(first.hasPrefix("Making room in the cache \(folder.cache.path) took "), "\(first)")
    let rows = first.firstMatch(of: /s: (\d+) stored rows? went to keep it within cache.maxBytes/)
    #expect((rows.flatMap { Int($0.1) } ?? 0) >= 1, "\(first)")
    #expect(first.hasSuffix("the time shown for this command includes it."), "\(first)")
    // Room made within its time: nothing said.
    let quiet = Recorder<String>()
    let other = try SQLiteCacheStore.open(
      at: folder.appending("other.sqlite"),
      budget: SQLiteCacheStore.Budget(maxBytes: 128 << 10, reportsEvictionAfter: .seconds(3600)),
      warn: { quiet.append($0) })
    for index in 0..<100 { try await other.store(entry("k\(index)")) }
    #expect(quiet.all.isEmpty)
  }

  /// An entity no stored list holds and no write edits goes before anything else, however
  /// recently used: a list keeps its movies, an edit waiting in the outbox keeps its row.
  @Test func entitiesNoAnswerHoldsGoFirst() async throws {
    let folder = try TemporaryDirectory("budget")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(
      at: folder.cache, budget: SQLiteCacheStore.Budget(maxBytes: 256 << 10))
    func entity(_ key: String, pending: Bool = false) -> CacheEntry {
      CacheEntry(
        key: key, payload: Data(repeating: 0x42, count: 2_000), storedAt: Date(),
        isPending: pending, scope: "p|Movie")
    }
    let held = (1...5).map { "p Movie/\($0)" }
    try await store.store(
      held.map { entity($0) } + [
        CacheEntry(key: "p list", payload: Data(), storedAt: Date(), references: held)
      ])
    try await store.store(entity("p Movie/99", pending: true))
    // Rows another program damaged: references that are no text, a use that is no time.
    try await store.store([entity("p Movie/7"), entry("p damaged list")])
    try await DatabaseQueue(path: folder.cache.path).write { db in
      try db.execute(sql: "UPDATE cache_entry SET refs = 42 WHERE key = 'p damaged list'")
      try db.execute(sql: "UPDATE cache_entry SET usedAt = 'soon' WHERE key = 'p Movie/7'")
    }
    let orphans = (10..<30).map { "p Movie/\($0)" }
    for key in orphans { try await store.store(entity(key)) }
    #expect(try await store.entry(for: orphans[0]) != nil, "the budget was reached too soon")

    var stored = 0
    while try await store.entry(for: orphans[0]) != nil, stored < 200 {
      try await store.store(entry("k\(stored)"))
      stored += 1
    }
    #expect(stored < 200, "no orphan was ever evicted")
    // The first went before the list's movies, the pending edit and the older whole answers.
    for key in held + ["p list", "p Movie/99", "k0"] {
      #expect(try await store.entry(for: key) != nil, "\(key) was evicted before an orphan")
    }
    // Past the orphans, the least recently used of any kind go, and the file stays bounded.
    for index in stored..<(stored + 200) { try await store.store(entry("k\(index)")) }
    let stats = try await store.statistics()
    #expect(stats.bytes <= 256 << 10, "\(stats)")
    for key in orphans { #expect(try await store.entry(for: key) == nil) }
    #expect(try await store.entry(for: "k0") == nil)
    // But never the row showing an edit not yet sent: it is the user's until its write settles.
    #expect(try await store.entry(for: "p Movie/99")?.isPending == true)
  }

  @Test func answersPastTheirAgeGoWhenTheNextIsStored() async throws {
    let folder = try TemporaryDirectory("budget")
    defer { folder.remove() }
    let store = try SQLiteCacheStore.open(
      at: folder.cache, budget: SQLiteCacheStore.Budget(maxAge: 86_400))
    let twoDaysAgo = Date().addingTimeInterval(-2 * 86_400)
    // An edit made offline two days ago, its write still kept: older than the budget's age.
    try await store.store(
      CacheEntry(
        key: "p Movie/1", payload: Data("{}".utf8), storedAt: twoDaysAgo, isPending: true,
        scope: "p|Movie"))
    try await store.store(entry("old", storedAt: twoDaysAgo))
    #expect(try await store.entry(for: "old") != nil)
    try await store.store(entry("new"))
    #expect(try await store.entry(for: "old") == nil)
    #expect(try await store.entry(for: "new") != nil)
    #expect(try await store.entry(for: "p Movie/1")?.isPending == true)
  }
}
