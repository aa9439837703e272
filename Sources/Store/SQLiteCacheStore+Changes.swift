import Foundation
import GRDB
import Layers
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Asks a watched store's file whether another connection committed since it last asked
/// (`PRAGMA data_version` changes only then: this connection's own commits are told
/// directly), and tells the watchers when one did. It is asked by the process's one
/// `ChangeTicker`, only while someone watches. A file that cannot be asked (locked past the
/// busy timeout) is asked again next time. A file deleted or replaced under the store (its path
/// no longer names the file the store opened: SQLite goes on reading the old one, whose
/// version never moves again) ends every watch with one sentence saying so.
final class ChangePoller: Sendable {
  private let database: any DatabaseWriter
  private let file: URL?
  /// The device and inode of the file the store opened.
  private let identity: FileIdentity?
  private let seen = Mutex<Int?>(nil)
  private let told = Mutex<ChangeNotices?>(nil)

  init(database: any DatabaseWriter, file: URL?) {
    self.database = database
    self.file = file
    identity = file.flatMap { FileIdentity(of: $0) }
  }

  /// Whom it tells: set once, after the notices that start it are made.
  var notices: ChangeNotices? {
    get { told.withLock { $0 } }
    set { told.withLock { $0 = newValue } }
  }

  func start() {
    let version = try? version()
    seen.withLock { $0 = version }
    ChangeTicker.add(self)
  }

  func stop() { ChangeTicker.remove(self) }

  /// Tells the watchers when the file's version moved since the last time, and ends their
  /// watch when the file is no longer the one the store opened.
  func check() {
    if let file, let identity, FileIdentity(of: file) != identity {
      notices?.end(
        StoreError.failed(
          file: file.path, doing: "watched",
          cause:
            "another program deleted or replaced it; run the command again to watch the one there now"
        ))
      return
    }
    guard let now = try? version() else { return }
    let moved = seen.withLock { seen in
      defer { seen = now }
      return seen != now
    }
    if moved { notices?.notify() }
  }

  /// One pragma on the store's own connection, outside any transaction: a read wrapped in one
  /// (BEGIN, COMMIT) by a task of its own for each store made 10 idle watchers cost 4.9% of a
  /// core (`kernel-bench observe`).
  private func version() throws -> Int? {
    try database.unsafeRead { db in try Int.fetchOne(db, sql: "PRAGMA data_version") }
  }
}

/// Which file a path names: its device and inode, nil when nothing is there.
struct FileIdentity: Equatable, Sendable {
  let device: UInt64
  let inode: UInt64

  init?(of file: URL) {
    var status = stat()
    guard stat(file.path, &status) == 0 else { return nil }
    device = UInt64(status.st_dev)
    inode = UInt64(status.st_ino)
  }
}

/// The process's one task that asks every watched store's file for changes, every
/// `SQLiteCacheStore.changePolling`, while any store is watched: one wake-up for them all.
enum ChangeTicker {
  private struct State {
    var pollers: [ObjectIdentifier: ChangePoller] = [:]
    var task: Task<Void, Never>?
  }

  private static let state = Mutex(State())

  static func add(_ poller: ChangePoller) {
    state.withLock { state in
      state.pollers[ObjectIdentifier(poller)] = poller
      guard state.task == nil else { return }
      state.task = Task {
        while !Task.isCancelled {
          do { try await Task.sleep(for: SQLiteCacheStore.changePolling) } catch { return }
          for poller in Self.state.withLock({ Array($0.pollers.values) }) { poller.check() }
        }
      }
    }
  }

  static func remove(_ poller: ChangePoller) {
    state.withLock { state in
      state.pollers[ObjectIdentifier(poller)] = nil
      guard state.pollers.isEmpty else { return }
      state.task?.cancel()
      state.task = nil
    }
  }
}
