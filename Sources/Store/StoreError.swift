import Domain
import Foundation
import GRDB

/// What the store reports. Each description is one sentence naming the file, the cause and
/// what to do.
public enum StoreError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The file was written by a newer build: it is left untouched.
  case newerSchema(file: String, unknownMigrations: [String])
  /// The database could not be opened.
  case unusable(file: String, cause: String, fix: String)
  /// An open database could not be read or written just now.
  case failed(file: String, doing: String, cause: String)
  /// A command on the cache itself (`cache stats`, `cache clear`) could not be done: unlike a
  /// read behind an answer, there is no api to fall back on, so it is the cache's failure.
  case maintenance(file: String, doing: String, cause: String, fix: String)

  /// A cache that cannot be opened is the local setup's fault (exit 78, like a config error);
  /// one that fails a read or a write mid-run is unavailable, and the caller goes on without it.
  public var failure: ServiceFailure {
    switch self {
    case .newerSchema, .unusable, .maintenance: .configuration
    case .failed: .unavailable
    }
  }

  public var description: String {
    switch self {
    case .newerSchema(let file, let unknown):
      "The cache \(file) was written by a newer version of Kernel (it has \(unknown.joined(separator: ", "))"
        + " that this build does not know); it was left untouched: update Kernel, or point --data-dir elsewhere."
    case .unusable(let file, let cause, let fix):
      "The cache \(file) cannot be opened: \(cause); \(fix)."
    case .failed(let file, let doing, let cause):
      "The cache \(file) could not be \(doing): \(cause)."
    case .maintenance(let file, let doing, let cause, let fix):
      "The cache \(file) could not be \(doing): \(cause); \(fix)."
    }
  }

  /// A SQLite failure in words a person can act on.
  static func cause(of error: any Error) -> String {
    guard let error = error as? DatabaseError else { return "\(error)" }
    switch error.resultCode.primaryResultCode {
    case .SQLITE_FULL: return "the disk is full"
    case .SQLITE_READONLY: return "it is read-only"
    case .SQLITE_BUSY, .SQLITE_LOCKED: return "another process holds it locked"
    // A write past the disk's or the process's file-size limit comes back as an I/O error.
    case .SQLITE_IOERR: return "the disk is full or failed"
    case .SQLITE_CANTOPEN: return "it cannot be opened"
    case .SQLITE_CORRUPT, .SQLITE_NOTADB: return "it is damaged"
    case .SQLITE_PERM, .SQLITE_AUTH: return "permission is denied"
    default: return error.message ?? "\(error.resultCode)"
    }
  }

  /// What to do about a cache that cannot be opened for `error`.
  static func fix(for error: any Error) -> String {
    guard let error = error as? DatabaseError else {
      return "move it aside or choose another --data-dir"
    }
    switch error.resultCode.primaryResultCode {
    case .SQLITE_BUSY, .SQLITE_LOCKED:
      return "wait for the other process to finish, or choose another --data-dir"
    case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_AUTH:
      return "make it and its folder writable (chmod u+w), or choose another --data-dir"
    case .SQLITE_FULL, .SQLITE_IOERR: return "free some disk space, or choose another --data-dir"
    default: return "move it aside or choose another --data-dir"
    }
  }
}
