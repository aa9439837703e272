import Dispatch
import Domain
import Foundation
import GRDBSQLite
import Layers
import MoviesKit
import MoviesTesting
import Store

/// The cache store against hand-written prepared statements over the sqlite3 C API, on the same
/// files (made by `SQLiteCacheStore`, WAL) with the same SQL, in one run: storing answers one
/// transaction each, as the caching layer does, and reading one answer among many.
enum StoreBench {
  static func run() async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "kernel-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: folder) }
    let writes = try await write(in: folder)
    let (reads, read100k) = try await read(in: folder)
    // A million small answers: how a read scales (a figure; no budget, so not with --quick).
    if !Runs.quick {
      let (_, read1m) = try await read(
        in: folder, count: 1_000_000, payload: Data(repeating: 0x2A, count: 100))
      print(
        "# a read among 1,000,000 is \(ContainerBench.format(read1m / max(read100k, 1)))x one among 100,000; no budget"
      )
    }
    let entities = try await EntityBench.run(in: folder, read100k: read100k)
    let changes = try await SyncBench.run(in: folder)
    print(
      writes && reads && entities && changes
        ? "# budgets: met (writes at most 1.5x, reads at most 2x the C API)"
        : "# budgets missed: "
          + [
            writes ? nil : "writes", reads ? nil : "reads", entities ? nil : "entities",
            changes ? nil : "a changes page",
          ].compactMap { $0 }.joined(separator: ", ") + " (see the lines above)"
    )
  }

  /// A year's top-ten list, encoded as the caching layer stores it.
  static func payload(_ year: Int) throws -> Data {
    let movies = (1...10).map { rank in
      Movie(
        id: year * 100 + rank, name: "Movie \(rank) of \(year)", year: year,
        releaseDate: Date(timeIntervalSince1970: Double(year) * 86_400),
        grossing: 1_000_000 / rank, rating: Double(100 - rank),
        cast: (0..<3).map { MovieActor(name: "Actor \((rank * 3 + $0) % 50)") })
    }
    return try CacheCodec<[Movie]>.json.encode(movies)
  }

  /// `count` answers; `payload` for each, or else one of 200 years' lists.
  static func entries(_ count: Int, payload fixed: Data? = nil) throws -> [CacheEntry] {
    let payloads = try fixed.map { [$0] } ?? (0..<200).map { try payload(1900 + $0) }
    return (0..<count).map { index in
      CacheEntry(
        key: "movies/topGrossing/\(index)", payload: payloads[index % payloads.count],
        storedAt: Date(), validators: CacheValidators(etag: "\"\(index)\""))
    }
  }

  /// 1,000 answers, each stored in a transaction of its own, into a new file; five rounds.
  static func write(in folder: URL) async throws -> Bool {
    let batch = try entries(1_000)
    var kernel: [Double] = []
    var c: [Double] = []
    for round in 0..<5 {
      let ours = folder.appendingPathComponent("ours-\(round).sqlite")
      let theirs = folder.appendingPathComponent("theirs-\(round).sqlite")
      let store = try SQLiteCacheStore.open(at: ours)
      _ = try SQLiteCacheStore.open(at: theirs)
      var start = DispatchTime.now().uptimeNanoseconds
      for entry in batch { try await store.store(entry) }
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start))
      let connection = try SQLiteC(theirs.path)
      start = DispatchTime.now().uptimeNanoseconds
      for entry in batch { try connection.store(entry) }
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start))
    }
    let ratio = median(kernel) / median(c)
    print("store.write_1k kernel_ns=\(Int(median(kernel))) sqlite_c_ns=\(Int(median(c)))")
    print(
      "# 1,000 answers of 10 movies, one transaction each: kernel \(ContainerBench.format(ratio))x the C loop"
    )
    return ratio <= 1.5
  }

  /// One answer read back among `count` stored (100,000 year lists; 1,000,000 small answers),
  /// by a store with a budget as `kernel` opens it (a read may mark its answer used); 15
  /// rounds of 2,000 reads each.
  static func read(in folder: URL, count: Int = 100_000, payload fixed: Data? = nil) async throws
    -> (withinBudget: Bool, nanoseconds: Double)
  {
    let file = folder.appendingPathComponent("large-\(count).sqlite")
    let store = try SQLiteCacheStore.open(
      at: file, budget: SQLiteCacheStore.Budget(maxBytes: 1 << 40))
    let connection = try SQLiteC(file.path)
    try connection.fill(try entries(count, payload: fixed))
    let key = "movies/topGrossing/54321"
    guard try await store.entry(for: key)?.payload == (try connection.payload(for: key)) else {
      print("kernel-bench: store: the two reads disagree")
      return (false, 0)
    }
    var kernel: [Double] = []
    var c: [Double] = []
    for _ in 0..<15 {
      var start = DispatchTime.now().uptimeNanoseconds
      for _ in 0..<2_000 { blackHole(try await store.entry(for: key)) }
      kernel.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 2_000)
      start = DispatchTime.now().uptimeNanoseconds
      for _ in 0..<2_000 { blackHole(try connection.payload(for: key)) }
      c.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 2_000)
    }
    let ours = median(kernel)
    let theirs = median(c)
    let label = count >= 1_000_000 ? "\(count / 1_000_000)m" : "\(count / 1_000)k"
    print("store.read_\(label) kernel_ns=\(Int(ours)) sqlite_c_ns=\(Int(theirs))")
    print(
      "# one answer among \(count.formatted()): kernel \(ContainerBench.format(ours / max(theirs, 1)))x the C query, \(Int(ours / 1000)) µs"
    )
    return (ours <= 2 * theirs, ours)
  }
}

/// The baseline: one sqlite3 connection and hand-prepared statements, the same SQL as the store.
final class SQLiteC {
  private var db: OpaquePointer?
  private var upsert: OpaquePointer?
  private var select: OpaquePointer?

  struct Failure: Error, CustomStringConvertible {
    let description: String
  }

  init(_ path: String) throws {
    guard sqlite3_open(path, &db) == SQLITE_OK else {
      throw Failure(description: "cannot open \(path)")
    }
    // The durability GRDB gives a WAL pool, so both sides wait for the disk alike.
    try exec("PRAGMA synchronous = NORMAL")
    upsert = try prepare(
      """
      INSERT INTO cache_entry (key, payload, storedAt, etag, lastModified, usedAt, pending,
        scope, refs, original, stale, gone)
      VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, 0, 0)
      ON CONFLICT(key) DO UPDATE SET payload = excluded.payload,
        storedAt = excluded.storedAt, etag = excluded.etag,
        lastModified = excluded.lastModified, usedAt = excluded.usedAt,
        pending = excluded.pending, scope = excluded.scope, refs = excluded.refs,
        original = excluded.original, stale = excluded.stale, gone = excluded.gone
      WHERE excluded.scope IS NULL OR excluded.pending = 1 OR cache_entry.pending = 0
      """)
    select = try prepare(
      "SELECT payload, storedAt, etag, lastModified, usedAt, pending, scope, refs, original,"
        + " stale FROM cache_entry WHERE key = ?")
  }

  deinit {
    sqlite3_finalize(upsert)
    sqlite3_finalize(select)
    sqlite3_close(db)
  }

  private func exec(_ sql: String) throws {
    guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
      throw Failure(description: String(cString: sqlite3_errmsg(db)))
    }
  }

  private func prepare(_ sql: String) throws -> OpaquePointer? {
    var statement: OpaquePointer?
    guard
      sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        == SQLITE_OK
    else {
      throw Failure(description: String(cString: sqlite3_errmsg(db)))
    }
    return statement
  }

  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private func bind(_ entry: CacheEntry) {
    sqlite3_bind_text(upsert, 1, entry.key, -1, Self.transient)
    _ = entry.payload.withUnsafeBytes { bytes in
      sqlite3_bind_blob(upsert, 2, bytes.baseAddress, Int32(bytes.count), Self.transient)
    }
    sqlite3_bind_double(upsert, 3, entry.storedAt.timeIntervalSince1970)
    if let etag = entry.validators.etag {
      sqlite3_bind_text(upsert, 4, etag, -1, Self.transient)
    } else {
      sqlite3_bind_null(upsert, 4)
    }
    sqlite3_bind_null(upsert, 5)
    sqlite3_bind_double(upsert, 6, Date().timeIntervalSince1970)
    if let scope = entry.scope {
      sqlite3_bind_text(upsert, 7, scope, -1, Self.transient)
    } else {
      sqlite3_bind_null(upsert, 7)
    }
    if let references = entry.references {
      sqlite3_bind_text(upsert, 8, references.joined(separator: "\n"), -1, Self.transient)
    } else {
      sqlite3_bind_null(upsert, 8)
    }
  }

  /// Several rows in one transaction: an answer and the entities it holds, as the caching
  /// layer stores a list.
  func store(_ entries: [CacheEntry]) throws {
    try exec("BEGIN IMMEDIATE")
    for entry in entries {
      bind(entry)
      guard sqlite3_step(upsert) == SQLITE_DONE else { throw Failure(description: "upsert") }
      sqlite3_reset(upsert)
    }
    try exec("COMMIT")
  }

  /// The payloads of `keys` read in one transaction, as a stored list is assembled.
  func payloads(for keys: [String]) throws -> [Data?] {
    try exec("BEGIN")
    defer { try? exec("COMMIT") }
    return try keys.map { try payload(for: $0) }
  }

  /// The rows a prepared `sql` (a local query's) selects with `arguments` bound in order.
  func rows(_ sql: String, _ arguments: [Any]) throws -> [Data] {
    let statement = try prepare(sql)
    defer { sqlite3_finalize(statement) }
    for (index, argument) in arguments.enumerated() {
      let position = Int32(index + 1)
      switch argument {
      case let number as Int: sqlite3_bind_int64(statement, position, Int64(number))
      case let text as String: sqlite3_bind_text(statement, position, text, -1, Self.transient)
      default: sqlite3_bind_null(statement, position)
      }
    }
    var found: [Data] = []
    while sqlite3_step(statement) == SQLITE_ROW {
      let bytes = sqlite3_column_blob(statement, 0)
      let count = Int(sqlite3_column_bytes(statement, 0))
      found.append(bytes.map { Data(bytes: $0, count: count) } ?? Data())
      blackHole(sqlite3_column_double(statement, 1))
    }
    return found
  }

  /// A page of a changes feed applied in one transaction with the store's statements
  /// (`SQLiteCacheStore.apply`): each entity upserted and, where its edit is pending, made the
  /// copy its undo puts back; the pending keys read, each list read once and written back
  /// without the deleted keys, a tombstone for each; the token.
  func apply(entities: [CacheEntry], gone: [String], token: CacheEntry) throws {
    let original = try prepare(
      "UPDATE cache_entry SET original = ? WHERE key = ? AND pending = 1")
    let pending = try prepare(
      "SELECT key FROM cache_entry INDEXED BY cache_entry_pending WHERE pending = 1")
    let lists = try prepare(
      "SELECT key, refs FROM cache_entry INDEXED BY cache_entry_lists WHERE refs IS NOT NULL")
    let update = try prepare("UPDATE cache_entry SET refs = ? WHERE key = ?")
    let tombstone = try prepare(
      """
      INSERT INTO cache_entry (key, payload, storedAt, usedAt, gone) VALUES (?, X'', ?, ?, 1)
      ON CONFLICT(key) DO UPDATE SET payload = X'', storedAt = excluded.storedAt,
        etag = NULL, lastModified = NULL, usedAt = excluded.usedAt, pending = 0, scope = NULL,
        refs = NULL, original = NULL, stale = 0, gone = 1
      """)
    defer {
      for statement in [original, pending, lists, update, tombstone] {
        sqlite3_finalize(statement)
      }
    }
    func step(_ statement: OpaquePointer?) throws {
      guard sqlite3_step(statement) == SQLITE_DONE else {
        throw Failure(description: String(cString: sqlite3_errmsg(db)))
      }
      sqlite3_reset(statement)
    }
    func text(_ statement: OpaquePointer?, _ column: Int32) -> String {
      sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }
    try exec("BEGIN IMMEDIATE")
    for entry in entities + [token] {
      bind(entry)
      try step(upsert)
    }
    for entry in entities {
      _ = entry.payload.withUnsafeBytes { bytes in
        sqlite3_bind_blob(original, 1, bytes.baseAddress, Int32(bytes.count), Self.transient)
      }
      sqlite3_bind_text(original, 2, entry.key, -1, Self.transient)
      try step(original)
    }
    var held = Set<String>()
    while sqlite3_step(pending) == SQLITE_ROW { held.insert(text(pending, 0)) }
    let removed = Set(gone).subtracting(held)
    var changed: [(String, String)] = []
    while sqlite3_step(lists) == SQLITE_ROW {
      let refs = text(lists, 1).split(separator: "\n", omittingEmptySubsequences: false)
      let kept = refs.filter { !removed.contains(String($0)) }
      if kept.count < refs.count { changed.append((text(lists, 0), kept.joined(separator: "\n"))) }
    }
    for (key, refs) in changed {
      sqlite3_bind_text(update, 1, refs, -1, Self.transient)
      sqlite3_bind_text(update, 2, key, -1, Self.transient)
      try step(update)
    }
    let now = Date().timeIntervalSince1970
    for key in removed {
      sqlite3_bind_text(tombstone, 1, key, -1, Self.transient)
      sqlite3_bind_double(tombstone, 2, now)
      sqlite3_bind_double(tombstone, 3, now)
      try step(tombstone)
    }
    try exec("COMMIT")
  }

  /// Runs `sql` as it is (an index the store made, for the same plan).
  func run(_ sql: String) throws { try exec(sql) }

  /// One answer in a transaction of its own, as the caching layer stores it.
  func store(_ entry: CacheEntry) throws { try store([entry]) }

  /// Many answers in one transaction: filling a file before reads are measured.
  func fill(_ entries: [CacheEntry]) throws { try store(entries) }

  /// The stored payload for `key`, read as the store reads a whole entry.
  func payload(for key: String) throws -> Data? {
    defer { sqlite3_reset(select) }
    sqlite3_bind_text(select, 1, key, -1, Self.transient)
    guard sqlite3_step(select) == SQLITE_ROW else { return nil }
    let bytes = sqlite3_column_blob(select, 0)
    let count = Int(sqlite3_column_bytes(select, 0))
    let data = bytes.map { Data(bytes: $0, count: count) }
    blackHole(sqlite3_column_double(select, 1))
    blackHole(sqlite3_column_text(select, 2).map { String(cString: $0) })
    blackHole(sqlite3_column_text(select, 3).map { String(cString: $0) })
    return data
  }
}
