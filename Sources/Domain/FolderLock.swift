import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An exclusive `flock` on a folder, held across processes: no lock file is left beside the
/// user's data. The persistent api context changes its file under it; the stores are made and
/// migrated under it, one process at a time. Kernel's own (package access), not an app's.
package struct FolderLock: Sendable {
  /// Why a folder could not be opened or locked, in words that follow "the folder …": "could
  /// not be opened to lock it (Permission denied)".
  package struct Failure: Error, Sendable {
    /// The system's words, after what was being done.
    package let reason: String
  }

  private let descriptor: Int32

  /// Waits for the lock, blocking this thread: for changes that take no time.
  package static func blocking(for folder: String) throws(Failure) -> FolderLock {
    let lock = try opened(folder)
    while flock(lock.descriptor, LOCK_EX) != 0 {
      guard errno == EINTR else { throw lock.failed() }
    }
    return lock
  }

  /// Waits for the lock without blocking a thread, trying again every 10 ms while another
  /// holder (a refresh under way) keeps it; a cancelled task stops waiting (`CancellationError`).
  package static func waiting(for folder: String) async throws -> FolderLock {
    let lock = try opened(folder)
    while flock(lock.descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR else { throw lock.failed() }
      do { try await Task.sleep(for: .milliseconds(10)) } catch {
        lock.release()
        throw error
      }
    }
    return lock
  }

  /// The lock, waited for at most `timeout` (trying every 2 ms, blocking this thread, as a store
  /// is opened synchronously); nil when the folder cannot be opened or locked, or the wait ran
  /// out: the caller goes on without it.
  package static func trying(for folder: String, timeout: Duration) -> FolderLock? {
    guard let lock = try? opened(folder) else { return nil }
    let deadline = ContinuousClock.now + timeout
    while flock(lock.descriptor, LOCK_EX | LOCK_NB) != 0 {
      guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
        lock.release()
        return nil
      }
      var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
      nanosleep(&pause, nil)
    }
    return lock
  }

  private static func opened(_ folder: String) throws(Failure) -> FolderLock {
    let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw Failure(reason: "could not be opened to lock it (\(String(cString: strerror(errno))))")
    }
    return FolderLock(descriptor: descriptor)
  }

  private func failed() -> Failure {
    let reason = String(cString: strerror(errno))
    release()
    return Failure(reason: "could not be locked (\(reason))")
  }

  /// Unlocks by closing: the lock goes with the descriptor.
  package func release() { close(descriptor) }

  /// Where `path` leads when it is a symbolic link; nil when it is not one, or is not there.
  /// Kernel makes files in its folders, never links, so a link where one of its files goes is
  /// another's: Kernel opens no database, writes nothing and changes no mode through it. (The
  /// folder itself may be a link: the user names it.)
  package static func link(at path: String) -> String? {
    var status = stat()
    guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
    return (try? FileManager.default.destinationOfSymbolicLink(atPath: path))
      ?? "a file it cannot name"
  }
}

/// What the system said of a file operation that failed, in its own words: the POSIX reason
/// Foundation wrapped (`No such file or directory`), not Foundation's "The operation could not
/// be completed." before it; else Foundation's description.
package func fileSystemReason(_ error: any Error) -> String {
  let error = error as NSError
  let posix =
    error.domain == NSPOSIXErrorDomain
    ? error : (error.userInfo[NSUnderlyingErrorKey] as? any Error).map { $0 as NSError }
  guard let posix, posix.domain == NSPOSIXErrorDomain, let code = Int32(exactly: posix.code)
  else { return error.localizedDescription }
  return String(cString: strerror(code))
}
