import Domain
import Foundation

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
