import Domain
import Foundation
import GRDB
import KernelTesting
import SampleApi
import Testing

/// The cache under every policy and fault, as `kernel` shows it: answers are never lost to a
/// cache that cannot be written, a cache that cannot be opened is one sentence, a lock is not a
/// long wait, and cacheThenNetwork and staleWhileRevalidate do in `kernel` what they say.
@Suite(.timeLimit(.minutes(5))) struct CacheTests {
  /// A config whose profiles stack the sample api under each policy these tests need.
  private func configure(_ kernel: Kernel) throws {
    try kernel.write(
      """
      environments:
        sample: {baseURL: "https://sample.invalid/api/", transport: sample}
      profiles:
        layered: {movies: [cache(networkFirst), api]}
        offline: {movies: [store]}
        updates: {movies: [cache(cacheThenNetwork), api]}
        revalidate: {movies: [cache(staleWhileRevalidate, 60), api]}
        flow: {movies: [cache(cacheFirst, 300), api]}
      """, to: "Config/kernel.yaml")
  }

  private func database(_ kernel: Kernel) throws -> DatabaseQueue {
    try DatabaseQueue(path: kernel.dataDirectory.appendingPathComponent("cache.sqlite").path)
  }

  @Test func aFullDiskCostsNoAnswerOnlyOneWarning() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1"])  // the file exists, with room for little
    let ids = (1...15).map(String.init)
    let run = try await kernel.run(["movies", "get"] + ids, fileSizeLimitKB: 48)
    #expect(run.status == 0, "\(run)")
    #expect(run.stdout.contains("15 movies from the api"), "\(run)")
    let warnings = run.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
    #expect(warnings.count == 1, "\(run)")
    #expect(
      warnings.first?.contains("the disk is full or failed; the answer is shown") == true, "\(run)")
  }

  @Test func aCacheThatCannotBeOpenedIsOneSentenceOfflineAndAWarningLayered() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let file = kernel.dataDirectory.appendingPathComponent("cache.sqlite")
    try FileManager.default.createDirectory(
      at: kernel.dataDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    try FileManager.default.createDirectory(at: file, withIntermediateDirectories: true)
    let sentence =
      "The cache \(file.path) cannot be opened: it is a directory; remove it or choose another --data-dir."

    let offline = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
    #expect(offline.status == 78, "\(offline)")
    #expect(offline.stderr == sentence + "\n", "\(offline)")

    let layered = try await kernel.run(["movies", "get", "1"])
    #expect(layered.status == 0, "\(layered)")
    #expect(layered.stdout.contains("Finding Dory"))
    #expect(layered.stderr == "warning: \(sentence) Answering from the api without the cache.\n")

    let stats = try await kernel.run(["cache", "stats"])
    #expect(stats.status == 78 && stats.stderr == sentence + "\n", "\(stats)")
  }

  /// A link planted where the cache goes, to another program's database: offline it is one
  /// sentence naming where it leads, layered a warning and the api's answer, and that database
  /// gains nothing: no `cache_entry`, no WAL file.
  @Test func aCacheThatIsALinkIsRefusedAndTheDatabaseItLeadsToUntouched() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try FileManager.default.createDirectory(
      at: kernel.dataDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    let other = kernel.workingDirectory.appendingPathComponent("theirs.db")
    let theirs = try DatabaseQueue(path: other.path)
    try await theirs.write { db in try db.execute(sql: "CREATE TABLE mine (x)") }
    try theirs.close()
    let file = kernel.dataDirectory.appendingPathComponent("cache.sqlite")
    try FileManager.default.createSymbolicLink(at: file, withDestinationURL: other)
    let sentence =
      "The cache \(file.path) cannot be opened: it is a symbolic link (to \(other.path)), and"
      + " Kernel opens no database through a link it did not make; remove it or choose another"
      + " --data-dir."

    let offline = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
    #expect(offline.status == 78 && offline.stderr == sentence + "\n", "\(offline)")
    let layered = try await kernel.run(["movies", "get", "1"])
    #expect(layered.status == 0 && layered.stdout.contains("Finding Dory"), "\(layered)")
    #expect(layered.stderr == "warning: \(sentence) Answering from the api without the cache.\n")

    let tables = try await DatabaseQueue(path: other.path).read { db in
      try String.fetchAll(db, sql: "SELECT name FROM sqlite_master")
    }
    #expect(tables == ["mine"])
    #expect(!FileManager.default.fileExists(atPath: other.path + "-wal"))
  }

  @Test func aNewerCacheIsRefusedWithItsExitCode() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1"])
    try await database(kernel).write { db in
      try db.execute(
        sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99: from the future')")
    }
    let offline = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
    #expect(offline.status == 78, "\(offline)")
    #expect(offline.stderr.contains("written by a newer version of Kernel"))
    #expect(offline.stderr.split(separator: "\n").count == 1, "\(offline)")
  }

  @Test func anotherProcessesExclusiveLockFailsFastNotInFifteenSeconds() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1"])
    var configuration = Configuration()
    configuration.allowsUnsafeTransactions = true  // the lock is held across accesses
    configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA locking_mode = EXCLUSIVE") }
    let holder = try DatabaseQueue(
      path: kernel.dataDirectory.appendingPathComponent("cache.sqlite").path,
      configuration: configuration)
    try await holder.write { db in try db.execute(sql: "DELETE FROM cache_entry WHERE 0") }
    try holder.inDatabase { db in try db.execute(sql: "BEGIN EXCLUSIVE") }
    defer { try? holder.inDatabase { db in try db.execute(sql: "ROLLBACK") } }

    // The deadline is against a hang (three 5 s waits were 15 s); the cache gives up in 1.5 s.
    let offline = try await kernel.run(
      ["--profile", "offline", "movies", "get", "1"], within: .seconds(10))
    #expect(offline.status == 78, "\(offline)")
    #expect(offline.stderr.contains("another process holds it locked; wait for the other process"))
    let layered = try await kernel.run(["movies", "get", "2"], within: .seconds(10))
    #expect(layered.status == 0, "\(layered)")
    #expect(layered.stdout.contains("1 movie from the api"))
    #expect(layered.stderr.contains("warning: The cache"))
    // Clearing a locked cache is the cache's failure (78), not an unreachable api (69).
    let clear = try await kernel.run(["cache", "clear"], within: .seconds(10))
    #expect(clear.status == 78, "\(clear)")
    #expect(clear.stderr.contains("locked"), "\(clear)")
  }

  /// Rows another program wrote with a `storedAt` out of range or of the wrong type crashed
  /// `cache stats` and offline reads; each is now a miss with one warning.
  @Test func rowsThatCannotBeReadAreMissesNeverACrash() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1", "2", "3", "4"])
    try await database(kernel).write { db in
      let keys = try String.fetchAll(db, sql: "SELECT key FROM cache_entry ORDER BY key")
      for (key, value) in zip(keys, ["1e19", "-1e300", "'yesterday'"]) {
        try db.execute(
          sql: "UPDATE cache_entry SET storedAt = \(value) WHERE key = ?", arguments: [key])
      }
    }
    for format in ["text", "json"] {
      let stats = try await kernel.run(["cache", "stats", "--format", format])
      #expect(stats.status == 0, "\(stats)")
      #expect(stats.stdout.contains("4"), "\(stats)")
    }
    let offline = try await kernel.run(
      ["--profile", "offline", "movies", "get", "1", "2", "3", "4", "--format", "json"])
    #expect(offline.status == 69, "\(offline)")  // three ids are missing from the cache
    #expect(offline.movieNames.count == 1, "\(offline)")
    let warnings = offline.stderr.split(separator: "\n").filter { $0.hasPrefix("warning:") }
    #expect(
      warnings.count == 3 && warnings.allSatisfy { $0.contains("cannot be read") }, "\(offline)")
  }

  /// `cache clear` keeps a movie showing a rating not yet sent, and says so: the edit is the
  /// user's until the outbox settles its write.
  @Test func clearingKeepsWhatShowsAChangeNotYetSent() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1", "3"])
    _ = try await kernel.run(["--profile", "offline", "movies", "rate", "3", "50"])
    let clear = try await kernel.run(["cache", "clear"])
    #expect(clear.status == 0, "\(clear)")
    #expect(
      clear.stdout
        == "Cleared the cache: 1 answer removed; 1 showing a change not yet sent stays until the"
        + " outbox sends it (outbox list; outbox drop undoes one).\n", "\(clear)")
    let shown = try await kernel.run(["--profile", "offline", "movies", "get", "3"])
    #expect(shown.stdout.contains("50.0") && shown.stdout.contains("not yet sent"), "\(shown)")
    _ = try await kernel.run(["outbox", "drop", "1"])
    let json = try await kernel.run(["cache", "clear", "--format", "json"])
    #expect(json.stdout == #"{"kept":0,"removed":1}"# + "\n", "\(json)")
  }

  /// Rows and writes stored two hours ahead of the clock (a clock set back since, or a file
  /// from a machine whose clock ran ahead) are "0 s old", as answers from them are: never a
  /// negative age in `cache stats` or `outbox list`.
  @Test func whatWasStoredAheadOfTheClockIsNoOlderThanNow() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    _ = try await kernel.run(["movies", "get", "1", "2"])
    _ = try await kernel.run(["--profile", "offline", "movies", "rate", "1", "50"])
    try await database(kernel).write { db in
      try db.execute(sql: "UPDATE cache_entry SET storedAt = storedAt + 7200")
    }
    let outbox = kernel.dataDirectory.appendingPathComponent("outbox.sqlite").path
    try await DatabaseQueue(path: outbox).write { db in
      try db.execute(sql: "UPDATE outbox_write SET createdAt = createdAt + 7200")
    }
    let stats = try await kernel.run(["cache", "stats"])
    #expect(stats.stdout.contains("oldest:  0 s old\nnewest:  0 s old\n"), "\(stats)")
    let json = try await kernel.run(["cache", "stats", "--format", "json"])
    #expect(json.stdout.contains(#""newestAgeSeconds":0,"#), "\(json)")
    #expect(json.stdout.contains(#""oldestAgeSeconds":0,"#), "\(json)")
    let writes = try await kernel.run(["outbox", "list"])
    #expect(writes.stdout.contains(" 0 s old "), "\(writes)")
    let listed = try await kernel.run(["outbox", "list", "--format", "json"])
    #expect(listed.stdout.contains(#""ageSeconds":0,"#), "\(listed)")
  }

  @Test func cacheThenNetworkPrintsTheCopyThenTheFreshAnswerWhenItDiffers() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try configure(kernel)
    _ = try await kernel.run(["--profile", "updates", "movies", "get", "1"])
    try await database(kernel).write { db in
      try db.execute(
        sql: """
          UPDATE cache_entry SET payload =
            CAST(replace(CAST(payload AS TEXT), 'Finding Dory', 'Finding Nemo') AS BLOB)
          """)
    }
    let json = try await kernel.run([
      "--profile", "updates", "movies", "get", "1", "--format", "json",
    ])
    #expect(json.status == 0, "\(json)")
    let lines = json.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 2, "\(json)")
    let objects = lines.compactMap {
      (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
    }
    #expect(objects.map { $0["origin"] as? String } == ["cache", "network"])
    #expect(
      lines.first?.contains("Finding Nemo") == true && lines.last?.contains("Finding Dory") == true)

    // Now the copy is the api's answer: it is printed once, and the api said so.
    let text = try await kernel.run(["--profile", "updates", "movies", "get", "1"])
    #expect(text.stdout.components(separatedBy: "Finding Dory").count == 2, "\(text)")
    #expect(text.stdout.contains("1 movie from cache"))
    #expect(text.stdout.contains("The api's answer is the same."))
  }

  /// An api that writes timestamps with milliseconds: the copy the cache keeps reads back equal
  /// to the api's answer, so an unchanged answer is printed once.
  @Test func cacheThenNetworkPrintsAnUnchangedAnswerWithMillisecondsOnce() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      server.handle("GET", "/api/movies/1") { _ in
        .json(
          JSONValue.object([
            "id": .integer(1), "name": .string("Finding Dory"), "year": .integer(2016),
            "releaseDate": .string("2016-06-17T10:00:07.123Z"), "grossing": .integer(486),
            "rating": .number(77), "cast": .array([]),
          ]))
      }
      try Self.configure(
        kernel, server, profiles: "updates: {movies: [cache(cacheThenNetwork), api]}")
      let first = try await kernel.run(["--profile", "updates", "movies", "get", "1"])
      #expect(first.status == 0, "\(first)")
      let again = try await kernel.run(["--profile", "updates", "movies", "get", "1"])
      #expect(again.stdout.components(separatedBy: "Finding Dory").count == 2, "\(again)")
      #expect(again.stdout.contains("The api's answer is the same."), "\(again)")
      let json = try await kernel.run([
        "--profile", "updates", "movies", "get", "1", "--format", "json",
      ])
      #expect(json.stdout.split(separator: "\n").count == 1, "\(json)")
    }
  }

  @Test func staleWhileRevalidateStoresItsRefreshBeforeKernelExits() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try configure(kernel)
    _ = try await kernel.run(["--profile", "revalidate", "movies", "get", "1"])
    try await database(kernel).write { db in
      try db.execute(sql: "UPDATE cache_entry SET storedAt = storedAt - 3600")
    }
    let run = try await kernel.run(
      ["--profile", "revalidate", "movies", "get", "1", "--format", "json"])
    #expect(run.status == 0, "\(run)")
    #expect(run.json?["origin"] as? String == "cache")
    // The process has ended; the refresh it started behind the answer was stored before that.
    let age = try await database(kernel).read { db in
      try Double.fetchOne(db, sql: "SELECT strftime('%s', 'now') - storedAt FROM cache_entry")
    }
    #expect((age ?? 3600) < 600, "the stored copy is \(age ?? -1) s old")
  }

  @Test func aStackWrittenAsAFlowListIsAccepted() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try configure(kernel)
    let run = try await kernel.run(["--profile", "flow", "movies", "get", "1"])
    #expect(run.status == 0, "\(run)")
    let again = try await kernel.run(["--profile", "flow", "movies", "get", "1"])
    #expect(again.stdout.contains("1 movie from cache"), "\(again)")
  }
}

extension CacheTests {
  /// A config whose `local` environment is `server`, with `profiles` (YAML, indented by two).
  static func configure(_ kernel: Kernel, _ server: FixtureServer, profiles: String) throws {
    try kernel.write(
      """
      environment: local
      environments:
        local: {baseURL: "\(server.baseURL.absoluteString)"}
      profiles:
        \(profiles)
      """, to: "Config/kernel.yaml")
  }

  /// `cache.maxBytes`: 1,000 movies fetched under a 128 KiB budget leave a file within it, the
  /// newest answers kept and the least recently used gone.
  @Test func theCacheKeepsWithinItsBudget() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try await withFixtureServer(routes: .sampleMovies(extraMovies: 1_000)) { server in
      try Self.configure(
        kernel, server,
        profiles: "layered: {movies: [cache(networkFirst), api]}\n  offline: {movies: [store]}")
      let budget = 128 << 10
      let run = try await kernel.run(
        [
          "--profile", "layered", "--cache-max-bytes", "\(budget)", "movies", "get", "-",
          "--concurrency", "8", "--format", "json",
        ], input: (1...1_000).map(String.init).joined(separator: "\n") + "\n")
      #expect(run.status == 0, "\(run.stderr.suffix(500))")
      let file = kernel.dataDirectory.appendingPathComponent("cache.sqlite")
      let size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
      let log =
        (try? FileManager.default.attributesOfItem(atPath: file.path + "-wal")[.size]) as? Int ?? 0
      #expect(size <= budget, "the file holds \(size) bytes, over \(budget)")
      #expect(log <= budget / 4, "the log holds \(log) bytes")
      let stats = try await kernel.run([
        "cache", "stats", "--format", "json", "--cache-max-bytes", "\(budget)",
      ])
      let entries = stats.json?["entries"] as? Int ?? 0
      #expect(entries > 50 && entries < 1_000, "\(stats)")
      #expect(stats.json?["maxBytes"] as? Int == budget, "\(stats)")
      #expect((stats.json?["bytes"] as? Int ?? .max) <= budget, "\(stats)")
      // The last movie fetched is kept; the first went.
      let last = try await kernel.run(["--profile", "offline", "movies", "get", "1000"])
      #expect(last.status == 0, "\(last)")
      let first = try await kernel.run(["--profile", "offline", "movies", "get", "1"])
      #expect(first.status == 69, "\(first)")
    }
  }
}
