import Foundation
import HTTPTypes
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where a download writes: a partial file beside its destination (`.NAME.partial`), held open
/// and locked for the whole download, with a resume record (`.NAME.partial.validator`: the URL
/// and the validator it started with) that lets a later try, or a later run, ask for the rest
/// only; or the destination itself when it is a device or a pipe.
///
/// Files are the user's: nothing here is opened through a link, a partial file or record that
/// is not a regular file of this user is refused, a new one is made exclusively (`O_EXCL`), and
/// the partial file is moved into place only while it is still the file this download wrote.
final class PartialDownload: Sendable {
  let destination: URL
  let progress: (@Sendable (TransferProgress) -> Void)?
  private let state = Mutex(State())

  private struct State {
    /// The partial file (or the device) this download holds, -1 before `open`.
    var descriptor: Int32 = -1
    var streams = false
    /// The file of the latest try.
    var body: BodyFile?
  }

  /// What a partial file was started from: a download of another URL starts over.
  struct ResumeRecord: Codable, Equatable {
    /// The request's scheme, authority, path and query.
    var url: String
    /// The strong `ETag` or `Last-Modified` that `If-Range` names.
    var validator: String
  }

  /// The largest resume record read: anything larger was not written by a download.
  static let recordLimit = 4096

  /// The paths of a download to `destination`, not opened (`open` opens them).
  init(destination: URL, progress: (@Sendable (TransferProgress) -> Void)?) {
    self.destination = destination
    self.progress = progress
  }

  var partial: URL {
    destination.deletingLastPathComponent()
      .appendingPathComponent(".\(destination.lastPathComponent).partial")
  }

  var validatorFile: URL {
    destination.deletingLastPathComponent()
      .appendingPathComponent(".\(destination.lastPathComponent).partial.validator")
  }

  /// The bytes the partial file holds, 0 without one.
  var offset: Int64 {
    var info = stat()
    let descriptor = state.withLock { $0.descriptor }
    if descriptor >= 0 { return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : 0 }
    return lstat(partial.path, &info) == 0 ? Int64(info.st_size) : 0
  }

  /// The download of `route` to `destination`, its file opened and locked; refused with
  /// `ApiError.output` before anything is sent when the destination cannot be written safely.
  static func open(
    _ destination: URL, for route: Route, progress: (@Sendable (TransferProgress) -> Void)?
  ) throws -> PartialDownload {
    let download = PartialDownload(destination: destination, progress: progress)
    let refuse = { (what: String) in download.refusal(what, route: route) }
    let name = destination.lastPathComponent
    guard !name.isEmpty, name != ".", name != "..", name != "/" else {
      throw refuse("it names a folder; name a file in it")
    }
    if destination.path == "/dev/stdout" { return try download.openStandardOutput(route) }
    var info = stat()
    if lstat(destination.path, &info) == 0 {
      switch info.st_mode & S_IFMT {
      case S_IFREG: break
      case S_IFDIR: throw refuse("it is a folder; name a file in it")
      case S_IFCHR, S_IFIFO: return try download.openStream(route)
      case S_IFLNK:
        var target = stat()
        if stat(destination.path, &target) == 0, Self.streams(target.st_mode) {
          return try download.openStream(route)
        }
        let to =
          (try? FileManager.default.destinationOfSymbolicLink(atPath: destination.path))
          .map { " to \($0)" } ?? ""
        throw refuse(
          "it is a symbolic link\(to), and a download never writes through a link; name the"
            + " file itself, or remove the link")
      default: throw refuse("it is neither a regular file, a device nor a pipe")
      }
    } else if errno != ENOENT {
      throw download.refusal("it cannot be looked at", errno: errno, route: route)
    }
    let folder = destination.deletingLastPathComponent()
    var folderInfo = stat()
    guard stat(folder.path, &folderInfo) == 0, folderInfo.st_mode & S_IFMT == S_IFDIR else {
      throw refuse("its folder \(folder.path) does not exist; make it first")
    }
    try download.openPartial(route)
    return download
  }

  /// Whether a file of `mode` is written as the bytes come: a character device or a pipe.
  private static func streams(_ mode: mode_t) -> Bool {
    mode & S_IFMT == S_IFCHR || mode & S_IFMT == S_IFIFO
  }

  private static func reason() -> String { String(cString: strerror(errno)) }

  /// `ApiError.output` for this destination: `what` failed, for `errno` when the system said
  /// why (its words in the reason, its error as the underlying one).
  func refusal(_ what: String, errno code: Int32? = nil, route: Route) -> ApiError {
    let failure = DiskFailure(what, errno: code)
    return .output(
      route: route, file: destination.path, reason: failure.reason, underlying: failure.error)
  }

  /// Opens the process's standard output, whatever the shell made it (a terminal, a pipe, a file
  /// it opened for `>`): written as the body comes, as for a pipe. The user named it, so the
  /// link `/dev/stdout` is the system's, not one planted.
  private func openStandardOutput(_ route: Route) throws -> PartialDownload {
    let descriptor = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)
    guard descriptor >= 0 else {
      throw refusal("it cannot be opened", errno: errno, route: route)
    }
    state.withLock {
      $0.descriptor = descriptor
      $0.streams = true
    }
    return self
  }

  /// Opens the destination itself, a device or a pipe: written as the body comes.
  private func openStream(_ route: Route) throws -> PartialDownload {
    let descriptor = systemOpen(destination.path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw refusal("it cannot be opened", errno: errno, route: route)
    }
    var info = stat()
    guard fstat(descriptor, &info) == 0, Self.streams(info.st_mode) else {
      systemClose(descriptor)
      throw refusal("it was replaced while it was opened", route: route)
    }
    state.withLock {
      $0.descriptor = descriptor
      $0.streams = true
    }
    return self
  }

  /// Opens the partial file without following a link (made exclusively when it is not there),
  /// checks that it is a regular file of this user, and locks it for this download.
  private func openPartial(_ route: Route) throws {
    let refuse = { (what: String) in self.refusal(what, route: route) }
    let path = partial.path
    for _ in 0..<8 {
      var info = stat()
      var descriptor: Int32
      if lstat(path, &info) == 0 {
        guard info.st_mode & S_IFMT == S_IFREG else {
          throw refuse(
            "\(path) is there and is not a partial file a download made (it is "
              + "\(Self.kind(info.st_mode))); remove it and run again")
        }
        descriptor = systemOpen(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        if descriptor < 0 && errno == ENOENT { continue }
      } else if errno == ENOENT {
        descriptor = systemOpen(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
        if descriptor < 0 && errno == EEXIST { continue }
      } else {
        descriptor = -1
      }
      guard descriptor >= 0 else {
        throw refusal("its partial file \(path) cannot be opened", errno: errno, route: route)
      }
      var opened = stat()
      guard fstat(descriptor, &opened) == 0, opened.st_mode & S_IFMT == S_IFREG,
        opened.st_uid == geteuid()
      else {
        systemClose(descriptor)
        throw refuse(
          "its partial file \(path) is not a regular file of this user; remove it and run again")
      }
      guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
        let code = errno
        systemClose(descriptor)
        throw code == EWOULDBLOCK
          ? refuse(
            "another download of it is under way (its partial file \(path) is locked); wait"
              + " for that one to end")
          : refusal("its partial file \(path) cannot be locked", errno: code, route: route)
      }
      // The download that held the lock may have moved its file into place meanwhile.
      guard Self.names(path, descriptor) else {
        systemClose(descriptor)
        continue
      }
      state.withLock { $0.descriptor = descriptor }
      return
    }
    throw refuse("its partial file \(path) keeps changing under it; run again")
  }

  /// Whether `path` names the file open as `descriptor` (not moved, removed or replaced).
  private static func names(_ path: String, _ descriptor: Int32) -> Bool {
    var named = stat()
    var opened = stat()
    return lstat(path, &named) == 0 && fstat(descriptor, &opened) == 0
      && named.st_ino == opened.st_ino && named.st_dev == opened.st_dev
  }

  private static func kind(_ mode: mode_t) -> String {
    switch mode & S_IFMT {
    case S_IFLNK: "a symbolic link"
    case S_IFDIR: "a folder"
    case S_IFIFO: "a pipe"
    case S_IFCHR, S_IFBLK: "a device"
    default: "not a regular file"
    }
  }

  /// The scheme, authority, path and query of `request`: the resource a partial file holds.
  static func resource(of request: HTTPRequest) -> String {
    "\(request.scheme ?? "")://\(request.authority ?? "")\(request.path ?? "")"
  }

  /// The file this try writes, and `request` asking only for what the partial file lacks when
  /// it holds something of this same URL and its validator is known.
  func file(for request: inout HTTPRequest) -> BodyFile {
    let streams = state.withLock { $0.streams }
    let url = Self.resource(of: request)
    let held = streams ? 0 : offset
    var start: Int64 = 0
    if held > 0, let record = readRecord(), record.url == url, !record.validator.isEmpty {
      request.headerFields[.range] = "bytes=\(held)-"
      request.headerFields[.ifRange] = record.validator
      start = held
    } else {
      request.headerFields[.range] = nil
      request.headerFields[.ifRange] = nil
    }
    let file = BodyFile(
      url: streams ? destination : partial, offset: start, seekable: !streams,
      opening: { [self] in
        // Under the lock `close` takes: never a descriptor closed, or reused, meanwhile.
        state.withLock { $0.descriptor >= 0 ? dup($0.descriptor) : -1 }
      },
      starting: { [self] head in
        // A 200 starts over with the validator it brings; a 206 continues under the same one.
        guard head.status.code == 200, !streams else { return }
        try writeRecord(
          Self.validator(of: head.headerFields).map { ResumeRecord(url: url, validator: $0) })
      }, progress: progress)
    state.withLock { $0.body = file }
    return file
  }

  /// What the file system refused in the latest try, when it refused.
  var diskFailure: DiskFailure? { state.withLock { $0.body }?.diskFailure }

  /// The resume record, when there is one this download can trust: a regular file of this user,
  /// opened without following a link, of a sensible size, that reads as a record.
  func readRecord() -> ResumeRecord? {
    let descriptor = systemOpen(validatorFile.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    var info = stat()
    guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG,
      info.st_uid == geteuid(), info.st_size <= Self.recordLimit,
      let data = try? handle.read(upToCount: Self.recordLimit)
    else { return nil }
    return try? JSONDecoder().decode(ResumeRecord.self, from: data)
  }

  /// Writes `record` (nil: removes it) through a new file made exclusively beside it and
  /// renamed over it, so a link placed at its name is replaced, never written through.
  func writeRecord(_ record: ResumeRecord?) throws {
    let path = validatorFile.path
    guard let record else {
      guard unlink(path) == 0 || errno == ENOENT else { throw recordFailure() }
      return
    }
    // A name of its own: a cancelled try winding down on the transport's thread may be writing
    // one too.
    let fresh = path + "." + UUID().uuidString
    let descriptor = systemOpen(
      fresh, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else { throw recordFailure() }
    let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    do {
      try handle.write(contentsOf: JSONEncoder().encode(record))
    } catch {
      unlink(fresh)
      throw BodyFile.Failure(
        description: "its resume record \(path) cannot be written (\(error))")
    }
    guard rename(fresh, path) == 0 else {
      let failure = recordFailure()
      unlink(fresh)
      throw failure
    }
  }

  private func recordFailure() -> BodyFile.Failure {
    BodyFile.Failure(
      description: "its resume record \(validatorFile.path) cannot be written (\(Self.reason()))")
  }

  /// What `If-Range` may name: a strong `ETag`, else `Last-Modified`; nil with neither.
  static func validator(of fields: HTTPFields) -> String? {
    if let etag = fields[.eTag], !etag.hasPrefix("W/") { return etag }
    return fields[.lastModified]
  }

  /// Moves the partial file into place when it holds the length announced and is still the
  /// file this download wrote; otherwise empties it and fails, leaving `destination` as it was.
  func complete(_ response: ApiResponse, route: Route) throws {
    let expected: Int64?
    if response.status == 206 {
      expected = response.headerFields[.contentRange].flatMap(BodyFile.contentRange)?.total
    } else {
      expected = response.headerFields[.contentLength].flatMap { Int64($0) }
    }
    let (descriptor, streams, body) = state.withLock { ($0.descriptor, $0.streams, $0.body) }
    let held = streams ? body?.current.completed ?? 0 : offset
    if let expected, held != expected {
      discard()
      throw ApiError.download(
        route: route, file: destination.path,
        reason: "the server announced \(expected) bytes and sent \(held)")
    }
    if streams { return }
    guard Self.names(partial.path, descriptor) else {
      throw refusal(
        "its partial file \(partial.path) was moved or replaced while it was written", route: route)
    }
    guard rename(partial.path, destination.path) == 0 else {
      throw refusal("it cannot be put in place", errno: errno, route: route)
    }
    try? writeRecord(nil)
  }

  /// Empties the partial file and removes its record: the next try starts over.
  func discard() {
    let (descriptor, streams) = state.withLock { ($0.descriptor, $0.streams) }
    guard !streams else { return }
    if descriptor >= 0 { _ = ftruncate(descriptor, 0) }
    try? writeRecord(nil)
  }

  /// Ends the download: an empty partial file (nothing to resume) is removed while it is still
  /// this download's, and the file is closed, which unlocks it.
  func close() {
    state.withLock { state in
      guard state.descriptor >= 0 else { return }
      // A cancelled try may still be winding down: its copy of the descriptor goes first, so
      // the lock ends with this download.
      state.body?.abandon()
      if !state.streams, offset(of: state.descriptor) == 0,
        Self.names(partial.path, state.descriptor)
      {
        unlink(partial.path)
      }
      systemClose(state.descriptor)
      state.descriptor = -1
      // The try's file holds this download in its closures: let both go.
      state.body = nil
    }
  }

  private func offset(of descriptor: Int32) -> Int64 {
    var info = stat()
    return fstat(descriptor, &info) == 0 ? Int64(info.st_size) : -1
  }
}

/// The C `open`, which `PartialDownload.open` hides by its name.
private func systemOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
  open(path, flags, mode)
}

/// The C `close`, which `PartialDownload.close` hides by its name.
private func systemClose(_ descriptor: Int32) {
  _ = close(descriptor)
}
