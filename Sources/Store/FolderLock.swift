import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Makes and migrates the stores of one folder one process at a time: any number of first runs
/// on a new data folder wait for the one making a file, then find it made, instead of racing to
/// create the same tables ("table outbox_write already exists"). The folder itself is locked
/// (`flock`), so no lock file is left beside the user's data; the lock is held only while a
/// store is opened.
enum FolderLock {
  /// Runs `body` holding the lock of the folder that holds `file`, waiting at most `timeout` for
  /// another process's opening to end. When the folder cannot be locked (it cannot be opened,
  /// or the wait ran out), `body` runs all the same: the migrations' own re-reading still
  /// settles a race, and an error there names the file.
  static func opening<T>(_ file: URL, timeout: Duration, _ body: () throws -> T) rethrows -> T {
    let folder = file.deletingLastPathComponent().path
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else { return try body() }
    defer { close(descriptor) }
    let deadline = ContinuousClock.now + timeout
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else { break }
      Thread.sleep(forTimeInterval: 0.002)
    }
    return try body()
  }
}
