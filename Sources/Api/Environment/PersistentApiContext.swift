import Domain
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A context saved as JSON in the data dir, so the chosen environment and the credentials survive
/// a restart. Opening it writes nothing; the first change creates the file, with permissions
/// 0600 (its folder 0700) and replaced atomically: written beside it, flushed, renamed over it.
///
/// Every change is a read-modify-write of the file under an exclusive lock held across
/// processes (`flock` on its folder, so no lock file is left beside it): a change reads what is on
/// disk now,
/// changes its own part (the saved environment, or one origin's credential), and writes, so no
/// process puts back what another removed (`auth logout` beside `env use`).
///
/// A file that is not a saved context is reported through `warn`, moved aside and replaced
/// with the defaults. A file that cannot be read (permission denied) is left as it is: this run
/// uses the defaults, and a change fails in one sentence rather than replace it.
///
/// The file: `{"environment": "<name>", "credentials": {"<origin>": {"authenticator": "oauth2",
/// "value": {…}}}}`, a credential kept by the origin (`http://127.0.0.1:8080`) it was issued for. A
/// file readable by others is tightened
/// to 0600 when it is read, with a warning.
package final class PersistentApiContext: ApiContext {
  /// The file it keeps the environment and credentials in (`context.json`).
  public let file: URL
  private let environments: [String: ApiEnvironment]
  /// The environment in use, the one saved (they differ after `override(with:)`), the
  /// credentials.
  private let state:
    Mutex<(environment: ApiEnvironment, saved: String, credentials: [String: StoredCredential])>

  /// Opens `file`, or starts from `defaultEnvironment` when there is none. `environments` are
  /// the ones a saved name may refer to (the config's); a saved name not among them falls back
  /// to the default with a warning.
  public init(
    file: URL, defaultEnvironment: ApiEnvironment, environments: [ApiEnvironment],
    warn: @Sendable (String) -> Void
  ) throws {
    self.file = file
    var known = Dictionary(
      environments.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    known[defaultEnvironment.name] = known[defaultEnvironment.name] ?? defaultEnvironment
    self.environments = known
    let loaded = Self.load(file, warn: warn)
    var environment = defaultEnvironment
    if let loaded {
      if let saved = known[loaded.environment] {
        environment = saved
      } else {
        warn(
          "The saved environment \"\(loaded.environment)\" in \(file.path) is not in the config;"
            + " using \(defaultEnvironment.name).")
      }
    }
    state = Mutex((environment, environment.name, loaded?.credentials ?? [:]))
  }

  /// The current environment.
  public var environment: ApiEnvironment { state.withLock { $0.environment } }

  public var credential: StoredCredential? {
    state.withLock { $0.credentials[$0.environment.origin.description] }
  }

  /// Makes `environment` the current one and saves the choice.
  public func use(_ environment: ApiEnvironment) throws {
    try save { $0.environment = environment.name }
    state.withLock { $0.environment = environment }
  }

  /// Uses `environment` for this process only: the saved choice stays (`--environment`).
  public func override(with environment: ApiEnvironment) {
    state.withLock { $0.environment = environment }
  }

  public func store(credential: StoredCredential?) throws {
    let origin = environment.origin.description
    try save { $0.credentials[origin] = credential }
  }

  /// Holds the folder's lock across the refresh: a run of another process that needs one
  /// waits, then finds the new credential on disk and sends nothing; a logout waits for the
  /// refresh to end and then removes what it stored.
  public func refreshCredential(
    replacing seen: StoredCredential?,
    with refresh: @Sendable (StoredCredential?) async throws -> StoredCredential
  ) async throws -> CredentialRefresh {
    let origin = environment.origin.description
    let lock = try await Self.locked(try lockedFolder()) { try await FolderLock.waiting(for: $0) }
    defer { lock.release() }
    let stored = try onDisk().credentials[origin]
    state.withLock { $0.credentials[origin] = stored }
    guard stored == seen else { return .changed(stored) }
    let fresh: StoredCredential
    do { fresh = try await refresh(stored) } catch AuthenticationError.revoked(let reason) {
      try save(holding: lock) { $0.credentials[origin] = nil }
      throw AuthenticationError.revoked(reason)
    }
    try save(holding: lock) { $0.credentials[origin] = fresh }
    return .refreshed(fresh)
  }

  /// The state on disk, or nil when there is none or it is unreadable (then moved aside).
  private static func load(_ file: URL, warn: (String) -> Void) -> ContextState? {
    if let target = FolderLock.link(at: file.path) {
      warn(
        "The api context file \(file.path) is a symbolic link (to \(target)), and Kernel reads no"
          + " context through a link it did not make; it was left as it is and this run uses the"
          + " defaults: remove the link to keep a context there.")
      return nil
    }
    guard FileManager.default.fileExists(atPath: file.path) else { return nil }
    var status = stat()
    if stat(file.path, &status) == 0, status.st_mode & 0o077 != 0 {
      let loose = String(status.st_mode & 0o777, radix: 8)
      if chmod(file.path, 0o600) == 0 {
        warn("The api context file \(file.path) was readable by others (\(loose)); it is now 0600.")
      } else {
        warn(
          "The api context file \(file.path) is readable by others (\(loose)) and could not be"
            + " tightened (\(String(cString: strerror(errno)))); fix it with chmod 600.")
      }
    }
    do {
      let data = try Data(contentsOf: file)
      return try JSONDecoder().decode(ContextState.self, from: data)
    } catch let error where isUnreadable(error) {
      warn(
        "The api context file \(file.path) cannot be read (\(Self.reason(error))); it was left as"
          + " it is and this run uses the defaults: make it yours and private (chown, chmod 600) to use it."
      )
      return nil
    } catch {
      let aside = file.appendingPathExtension("corrupt-\(Int(Date().timeIntervalSince1970))")
      try? FileManager.default.moveItem(at: file, to: aside)
      warn(
        "The api context file \(file.path) could not be read (\(Self.reason(error))); it was moved"
          + " to \(aside.lastPathComponent) and replaced with the defaults.")
      return nil
    }
  }

  private static func reason(_ error: any Error) -> String {
    if error is DecodingError { return "it is not a saved context" }
    if isUnreadable(error) { return "permission denied" }
    return fileSystemReason(error)
  }

  /// Whether reading failed for want of permission: not the file's fault, so never moved aside.
  private static func isUnreadable(_ error: any Error) -> Bool {
    if let cocoa = error as? CocoaError, cocoa.code == .fileReadNoPermission { return true }
    let underlying = (error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError
    return underlying?.domain == NSPOSIXErrorDomain && underlying?.code == Int(EACCES)
  }

  /// Applies `change` to the state on disk under the cross-process lock, writes it, and keeps
  /// the credentials it ends with; the environment in use stays this process's own.
  private func save(_ change: (inout ContextState) -> Void) throws {
    let lock = try Self.locked(try lockedFolder()) { try FolderLock.blocking(for: $0) }
    defer { lock.release() }
    try save(holding: lock, change)
  }

  /// `save` by a caller that holds the folder's lock already.
  private func save(holding lock: FolderLock, _ change: (inout ContextState) -> Void) throws {
    if let target = FolderLock.link(at: file.path) {
      throw ApiError.contextStorage(
        file: file.path,
        reason: "it is a symbolic link (to \(target)), and Kernel writes nothing through a link"
          + " it did not make, nor over it; remove the link")
    }
    var current = try onDisk()
    change(&current)
    try persist(current)
    let saved = current
    state.withLock {
      $0.saved = saved.environment
      $0.credentials = saved.credentials
    }
  }

  /// The state on disk now (read under the lock), or this process's when there is no file or
  /// it is not a saved context.
  private func onDisk() throws -> ContextState {
    var current = state.withLock {
      ContextState(environment: $0.saved, credentials: $0.credentials)
    }
    if FileManager.default.fileExists(atPath: file.path) {
      do {
        let data = try Data(contentsOf: file)
        if let onDisk = try? JSONDecoder().decode(ContextState.self, from: data) {
          current = onDisk
        }
      } catch {
        throw ApiError.contextStorage(
          file: file.path,
          reason: "it cannot be read (\(Self.reason(error))), so it was not changed; make it yours"
            + " and private (chown, chmod 600)")
      }
    }
    return current
  }

  /// The folder, created if needed: what the cross-process lock is taken on.
  private func lockedFolder() throws -> String {
    try createFolder()
    return file.deletingLastPathComponent().path
  }

  private func createFolder() throws {
    do {
      try FileManager.default.createDirectory(
        at: file.deletingLastPathComponent(), withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw ApiError.contextStorage(
        file: file.path, reason: "its folder could not be created (\(error))")
    }
  }

  /// Writes `snapshot` to a new 0600 file beside `file`, flushes it, and renames it over `file`.
  private func persist(_ snapshot: ContextState) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    let data: Data
    do { data = try encoder.encode(snapshot) } catch {
      throw ApiError.contextStorage(file: file.path, reason: "it could not be encoded (\(error))")
    }
    let folder = file.deletingLastPathComponent()
    let temporary = folder.appendingPathComponent(
      ".\(file.lastPathComponent).\(UUID().uuidString).tmp")
    let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else {
      throw ApiError.contextStorage(
        file: file.path, reason: "it could not be written (\(String(cString: strerror(errno))))")
    }
    let written = data.withUnsafeBytes { bytes in
      bytes.baseAddress.map { write(descriptor, $0, bytes.count) } ?? 0
    }
    let flushed = fsync(descriptor) == 0
    close(descriptor)
    guard written == data.count, flushed, rename(temporary.path, file.path) == 0 else {
      let reason = String(cString: strerror(errno))
      unlink(temporary.path)
      throw ApiError.contextStorage(file: file.path, reason: "it could not be written (\(reason))")
    }
  }
}

extension PersistentApiContext {
  /// The folder's lock, taken by `take`; a folder that cannot be opened or locked is the
  /// context's storage error, naming it.
  fileprivate static func locked(_ folder: String, _ take: (String) throws -> FolderLock) throws
    -> FolderLock
  {
    do { return try take(folder) } catch let failure as FolderLock.Failure {
      throw ApiError.contextStorage(file: folder, reason: "the folder \(failure.reason)")
    }
  }

  /// `locked`, waiting without blocking a thread.
  fileprivate static func locked(
    _ folder: String, _ take: (String) async throws -> FolderLock
  ) async throws -> FolderLock {
    do { return try await take(folder) } catch let failure as FolderLock.Failure {
      throw ApiError.contextStorage(file: folder, reason: "the folder \(failure.reason)")
    }
  }
}
