import GRDB
import Layers
import Synchronization

/// Asks a watched store's file whether another connection committed since it last asked
/// (`PRAGMA data_version` changes only then: this connection's own commits are told
/// directly), and tells the watchers when one did. It is asked by the process's one
/// `ChangeTicker`, only while someone watches. A file that cannot be asked (locked past the
/// busy timeout, gone) is asked again next time.
final class ChangePoller: Sendable {
  private let database: any DatabaseWriter
  private let seen = Mutex<Int?>(nil)
  private let told = Mutex<ChangeNotices?>(nil)

  init(database: any DatabaseWriter) { self.database = database }

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

  /// Tells the watchers when the file's version moved since the last time.
  func check() {
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
