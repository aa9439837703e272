import Domain
import Foundation
import GRDB
import Layers
import Synchronization

/// Opening the cache file: checked, connected in WAL mode, migrated, its shape checked; a
/// damaged one moved aside.
extension SQLiteCacheStore {
  /// Opens (creating if needed) the database at `file`. Throws `StoreError.unusable` or
  /// `.newerSchema`, each naming the file, the cause and the fix.
  public static func open(
    at file: URL, busyTimeout: Duration = .milliseconds(1500), budget: Budget = .unbounded,
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) throws -> SQLiteCacheStore {
    try checkKinds(of: file)
    do {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw StoreError.unusable(
        file: file.path,
        cause: "its folder could not be created (\(fileSystemReason(error)))",
        fix: "choose another --data-dir")
    }
    let writer = try connectRepairing(file, busyTimeout: busyTimeout, warn: warn)
    if let maxBytes = budget.maxBytes { bounded(writer, to: maxBytes) }
    return SQLiteCacheStore(file: file, database: writer, budget: budget, warn: warn)
  }

  /// Refuses a cache file, or a `-wal` or `-shm` beside it, that is not a regular file
  /// (`unusableKind(of:)`).
  private static func checkKinds(of file: URL) throws {
    if let (cause, fix) = unusableKind(of: file) {
      throw StoreError.unusable(file: file.path, cause: cause, fix: fix)
    }
  }

  /// Why a database file of Kernel's, or a `-wal` or `-shm` beside it, is not one to open, and
  /// the fix; nil when each is a regular file or not there. A symbolic link is another's
  /// (`FolderLock.link(at:)`): SQLite would open the database it leads to and write Kernel's
  /// tables into it. A directory, a FIFO, a device or a socket would fail with an I/O error
  /// that reads like a full disk, or block on a FIFO.
  static func unusableKind(of file: URL) -> (cause: String, fix: String)? {
    for path in [file.path, file.path + "-wal", file.path + "-shm"] {
      let named = path == file.path ? "it" : URL(fileURLWithPath: path).lastPathComponent
      let fix = "remove \(named) or choose another --data-dir"
      if let target = FolderLock.link(at: path) {
        return (
          "\(named) is a symbolic link (to \(target)), and Kernel opens no database through a"
            + " link it did not make", fix
        )
      }
      var status = stat()
      guard stat(path, &status) == 0 else { continue }
      let kind: String
      switch status.st_mode & S_IFMT {
      case S_IFREG: continue
      case S_IFDIR: kind = "a directory"
      case S_IFIFO: kind = "a FIFO"
      case S_IFCHR, S_IFBLK: kind = "a device"
      case S_IFSOCK: kind = "a socket"
      default: kind = "not a regular file"
      }
      return ("\(named) is \(kind)", fix)
    }
    return nil
  }

  /// The writing connection; a file that is not a database or is corrupt is moved aside (with
  /// a warning) and a new one started.
  private static func connectRepairing(
    _ file: URL, busyTimeout: Duration, warn: @escaping @Sendable (String) -> Void
  ) throws -> any DatabaseWriter {
    do {
      return try connect(file, busyTimeout: busyTimeout)
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      let aside = try moveAside(file)
      warn(
        "The cache \(file.path) was damaged (\(error.message ?? "SQLite error \(error.resultCode.rawValue)"));"
          + " it was moved to \(aside.lastPathComponent)"
          + " and a new one was started.")
      return try connect(file, busyTimeout: busyTimeout)
    }
  }

  /// A database in memory, for tests.
  public static func inMemory(warn: @escaping @Sendable (String) -> Void = { _ in }) throws
    -> SQLiteCacheStore
  {
    let queue = try DatabaseQueue()
    try migrate(queue, file: ":memory:", busyTimeout: .zero)
    return SQLiteCacheStore(file: nil, database: queue, warn: warn)
  }

  /// The connection waits for another process's lock as the outbox's does: GRDB's busy mode,
  /// at most `busyTimeout` a statement; a statement that waits longer fails the opening.
  private static func connect(_ file: URL, busyTimeout: Duration) throws -> any DatabaseWriter {
    var configuration = Configuration()
    configuration.busyMode = .timeout(busyTimeout.seconds)
    do {
      // One connection in WAL mode: other processes still read while one writes, and a read
      // here costs a third of what a pool's would (it takes no reader from a pool; measured:
      // 8 µs against 23 µs, the C API's 6 µs). WAL is set here rather than by GRDB's
      // `journalMode = .wal`, which then checks the `-wal` file's size for its pools' sake: when
      // another connection closes last between that check's two steps and removes the file, the
      // open fails with "no such file" (a soak run caught two connections opening a new file so).
      configuration.prepareDatabase { db in
        // First of all: a new file is made to give freed pages back (`incremental_vacuum`);
        // once anything is written (turning it to WAL writes its header) it takes a `VACUUM`
        // (`CacheBudget.shrinkable`). Only when it is not so already: setting it writes the
        // header, so every run that only reads would write and sync the file.
        if try Int.fetchOne(db, sql: "PRAGMA auto_vacuum") != 2 {
          try db.execute(sql: "PRAGMA auto_vacuum = INCREMENTAL")
        }
        let mode = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
        guard mode == "wal" else {
          throw StoreError.unusable(
            file: file.path,
            cause: "it could not be turned to WAL mode (it is in \(mode ?? "no") mode)",
            fix: "move it aside or choose another --data-dir")
        }
        try db.execute(sql: "PRAGMA synchronous = NORMAL")
      }
      return try FolderLock.opening(file, timeout: busyTimeout * 2) {
        let queue = try queue(file, configuration, busyTimeout: busyTimeout)
        try migrate(queue, file: file.path, busyTimeout: busyTimeout)
        try checkShape(queue)
        return queue
      }
    } catch let error as DatabaseError
      where error.resultCode == .SQLITE_NOTADB || error.resultCode == .SQLITE_CORRUPT
    {
      throw error
    } catch let error as StoreError {
      throw error
    } catch {
      throw StoreError.unusable(
        file: file.path, cause: StoreError.cause(of: error), fix: StoreError.fix(for: error))
    }
  }

  /// Refuses a file whose `cache_entry` is not the table Kernel made (a view, say a recursive
  /// one that never ends, or a table with a trigger): another program made it, and reading it
  /// could hang or do anything. It is damaged, so moved aside (`connectRepairing`).
  private static func checkShape(_ queue: DatabaseQueue) throws {
    guard try !queue.read({ try StoredRow.isForeign("cache_entry", in: $0) }) else {
      throw DatabaseError(
        resultCode: .SQLITE_CORRUPT,
        message: "its cache_entry is not the table Kernel made (a view or a trigger)")
    }
  }

  /// The file opened. Turning a new file to WAL while another process does the same can be
  /// refused at once, without the busy handler (SQLite's way out of a deadlock): a few more
  /// tries, after short pauses, settle it. A refusal after the busy timeout is final.
  private static func queue(_ file: URL, _ configuration: Configuration, busyTimeout: Duration)
    throws -> DatabaseQueue
  {
    var attempt = 1
    while true {
      let started = ContinuousClock.now
      do {
        return try DatabaseQueue(path: file.path, configuration: configuration)
      } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
        guard mayTryAgain(attempt, started: started, busyTimeout: busyTimeout) else { throw error }
        attempt += 1
      }
    }
  }

  /// Whether a statement refused with `SQLITE_BUSY` may be tried again, after a pause that grows
  /// with `attempt`: only when SQLite refused it at once, to break a deadlock, and not after it
  /// waited out `busyTimeout` for another process's lock (that process still holds it); four
  /// tries at most.
  static func mayTryAgain(_ attempt: Int, started: ContinuousClock.Instant, busyTimeout: Duration)
    -> Bool
  {
    guard attempt < 5, ContinuousClock.now - started < busyTimeout / 2 else { return false }
    Thread.sleep(forTimeInterval: Double(attempt) * 0.02)
    return true
  }

  /// Moves the file and its WAL companions aside; returns where the file went.
  private static func moveAside(_ file: URL) throws -> URL {
    let stamp = Int(Date().timeIntervalSince1970)
    let aside = file.deletingLastPathComponent().appendingPathComponent(
      "\(file.lastPathComponent).corrupt-\(stamp)")
    do {
      try FileManager.default.moveItem(at: file, to: aside)
    } catch {
      throw StoreError.unusable(
        file: file.path,
        cause: "it is damaged and could not be moved aside (\(fileSystemReason(error)))",
        fix: "delete it or choose another --data-dir")
    }
    for suffix in ["-wal", "-shm"] {
      let companion = URL(fileURLWithPath: file.path + suffix)
      try? FileManager.default.moveItem(
        at: companion, to: URL(fileURLWithPath: aside.path + suffix))
    }
    return aside
  }
}

extension FolderLock {
  /// Makes and migrates the stores of one folder one process at a time: any number of first
  /// runs on a new data folder wait for the one making a file, then find it made, instead of
  /// racing to create the same tables ("table outbox_write already exists"). Runs `body` holding
  /// the lock of the folder that holds `file`, waiting at most `timeout` for another process's
  /// opening to end. When the folder cannot be locked (it cannot be opened, or the wait ran
  /// out), `body` runs all the same: the migrations' own re-reading still settles a race, and an
  /// error there names the file.
  static func opening<T>(_ file: URL, timeout: Duration, _ body: () throws -> T) rethrows -> T {
    let lock = trying(for: file.deletingLastPathComponent().path, timeout: timeout)
    defer { lock?.release() }
    return try body()
  }
}
