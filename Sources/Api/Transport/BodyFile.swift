import Foundation
import HTTPTypes
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// How far a transfer is: the bytes done and, when the answer announced it, how many there are
/// in all. A resumed download counts the bytes it started with.
public struct TransferProgress: Sendable, Equatable, CustomStringConvertible {
  /// The bytes done.
  public var completed: Int64
  /// Nil when the answer named no length (a chunked body).
  public var expected: Int64?

  /// `completed` of `expected` bytes.
  public init(completed: Int64, expected: Int64?) {
    self.completed = completed
    self.expected = expected
  }

  /// From 0 to 1, when the total is known.
  public var fraction: Double? {
    expected.map { $0 > 0 ? min(1, Double(completed) / Double($0)) : 1 }
  }

  /// `12.5 MB of 50.0 MB (25%)`, or `12.5 MB` without a total.
  public var description: String {
    let done = Self.megabytes(completed)
    guard let expected, let fraction else { return done }
    return "\(done) of \(Self.megabytes(expected)) (\(Int(fraction * 100))%)"
  }

  static func megabytes(_ bytes: Int64) -> String {
    String(format: "%.1f MB", Double(bytes) / 1_000_000)
  }
}

/// Tells a transfer's progress at most every `interval`, and always when told to (the first and
/// the last): the one rate limit of upload and download progress.
final class ProgressTeller: Sendable {
  let tell: @Sendable (TransferProgress) -> Void
  private let clock = ContinuousClock()
  private let told = Mutex<ContinuousClock.Instant?>(nil)

  /// Progress is told at most this often, and once more at the end.
  static let interval: Duration = .milliseconds(100)

  init(_ tell: @escaping @Sendable (TransferProgress) -> Void) { self.tell = tell }

  func callAsFunction(_ progress: TransferProgress, always: Bool = false) {
    let now = clock.now
    let due = told.withLock { last -> Bool in
      guard always || last.map({ now - $0 >= Self.interval }) ?? true else { return false }
      last = now
      return true
    }
    if due { tell(progress) }
  }
}

/// Where a transport writes the body of a 2xx answer as it arrives, instead of holding it in
/// memory: the partial file of a download (`ApiClient.download`). A 200 starts the file over; a
/// 206 continues it from `offset`, which its `Content-Range` must name; the body of any other
/// status is held in memory as usual, to be read as an error, and never written here.
///
/// A transport calls `begin` once the head is known and before the first byte of the body,
/// `write` for each chunk in order, and `end` when the body is complete; all from one thread at
/// a time. `begin` hands the head to `starting` first (the download records the validator it
/// resumes with), so a process killed at any byte leaves a file that can be resumed.
public final class BodyFile: Sendable {
  /// The file written.
  public let url: URL
  /// The bytes already in the file from an earlier try or run.
  public let offset: Int64
  private let seekable: Bool
  private let opening: @Sendable () -> Int32
  private let starting: @Sendable (HTTPResponse) throws -> Void
  private let progress: ProgressTeller?
  private let state = Mutex(State())

  /// Progress is told at most this often, and once more at the end.
  public static let progressInterval = ProgressTeller.interval

  private struct State {
    var descriptor: Int32 = -1
    var completed: Int64 = 0
    var expected: Int64?
    var began = false
    /// Where the disk has been asked to write up to (`writeBehind`).
    var flushed: Int64 = 0
    var diskFailure: DiskFailure?
    /// Its owner has ended the download: nothing more is written.
    var abandoned = false
  }

  /// How far the file may run ahead of the disk: every this many bytes, the kernel is asked to
  /// start writing them (`POSIX_FADV_DONTNEED` on Linux, which also drops them from the page
  /// cache once written), so the `fsync` before the move into place waits for the last few
  /// megabytes only. `kernel-bench http`, 512 MiB on loopback: without it the final fsync took
  /// 0.3 s of 0.62, and the download ran at 0.5x curl's throughput (curl does not fsync).
  static let writeBehind: Int64 = 8 << 20

  /// Why a body could not be written to its file; the transfer ends with it.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    public let description: String
  }

  /// A body written to `url` from byte `offset`; `starting` checks the answer's head first,
  /// `progress` hears each chunk. The file is opened by its path, never through a link (a link
  /// there fails the transfer), and made if it is not there.
  public convenience init(
    url: URL, offset: Int64,
    starting: @escaping @Sendable (HTTPResponse) throws -> Void = { _ in },
    progress: (@Sendable (TransferProgress) -> Void)? = nil
  ) {
    self.init(
      url: url, offset: offset, seekable: true,
      opening: { open(url.path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o644) },
      starting: starting, progress: progress)
  }

  /// A body written to a file its owner opened: `opening` hands a descriptor this file may close
  /// (a download's `dup` of the partial file it holds locked), or -1 with `errno` set. A file
  /// that is not `seekable` (a device or a pipe) is written as the bytes come: never truncated,
  /// never resumed, never synced.
  init(
    url: URL, offset: Int64, seekable: Bool, opening: @escaping @Sendable () -> Int32,
    starting: @escaping @Sendable (HTTPResponse) throws -> Void,
    progress: (@Sendable (TransferProgress) -> Void)?
  ) {
    self.url = url
    self.offset = offset
    self.seekable = seekable
    self.opening = opening
    self.starting = starting
    self.progress = progress.map(ProgressTeller.init)
  }

  /// Closes the file and fails every later write: its owner has ended the download (a cancelled
  /// transfer may still be winding down on the transport's thread).
  func abandon() {
    state.withLock { state in
      if state.descriptor >= 0 { close(state.descriptor) }
      state.descriptor = -1
      state.abandoned = true
    }
  }

  /// What the file system refused (opening, writing or syncing the file), when it did: a failure
  /// of this machine, not of the answer.
  var diskFailure: DiskFailure? { state.withLock { $0.diskFailure } }

  /// Records that the file could not be written, for `code` (the `errno` of the call that
  /// failed), as the disk's refusal, and returns the failure to throw.
  private func refusedByDisk(_ state: inout State, errno code: Int32) -> Failure {
    let failure = DiskFailure("it cannot be written", errno: code)
    state.diskFailure = failure
    return Failure(description: failure.reason)
  }

  deinit {
    state.withLock { state in
      if state.descriptor >= 0 { close(state.descriptor) }
    }
  }

  /// Whether `status` is written to the file: 200 and 206.
  public static func takes(_ status: Int) -> Bool { status == 200 || status == 206 }

  /// The head of the answer, before any byte of its body: opens the file (from the start for a
  /// 200, at `offset` for a 206 whose range starts there) and reports the first progress.
  /// Throws when the 206 continues from another byte, or the file cannot be opened.
  public func begin(_ head: HTTPResponse) throws {
    let status = head.status.code
    let length = head.headerFields[.contentLength].flatMap { Int64($0) }
    var start: Int64 = 0
    var expected = length
    if status == 206 {
      guard let range = head.headerFields[.contentRange].flatMap(Self.contentRange) else {
        throw Failure(description: "the server answered 206 without a Content-Range it can read")
      }
      guard range.first == offset else {
        throw Failure(
          description: "the server sent the body from byte \(range.first), not from byte \(offset)")
      }
      start = offset
      expected = range.total ?? length.map { $0 + offset }
    }
    // A download ended meanwhile (a cancelled try winding down): nothing more of it is written.
    guard !state.withLock({ $0.abandoned }) else {
      throw Failure(description: "the download has ended")
    }
    try starting(head)
    let descriptor = opening()
    guard descriptor >= 0 else {
      let code = errno
      throw state.withLock { refusedByDisk(&$0, errno: code) }
    }
    if seekable {
      guard ftruncate(descriptor, off_t(start)) == 0,
        lseek(descriptor, off_t(start), SEEK_SET) >= 0
      else {
        let code = errno
        close(descriptor)
        throw state.withLock { refusedByDisk(&$0, errno: code) }
      }
    } else if start != 0 {
      close(descriptor)
      throw Failure(description: "a device or a pipe is written from its first byte, not resumed")
    }
    try state.withLock { state in
      if state.descriptor >= 0 { close(state.descriptor) }
      guard !state.abandoned else {
        close(descriptor)
        throw Failure(description: "the download has ended")
      }
      state = State(
        descriptor: descriptor, completed: start, expected: expected, began: true, flushed: start)
    }
    progress?(TransferProgress(completed: start, expected: expected), always: true)
  }

  /// Appends `bytes`, all of them or a failure.
  ///
  /// Safe: `base` walks `bytes` from its start by what `write` reports written, never past
  /// `bytes.count` in all, and `bytes` is the caller's, valid for the call (libcurl's buffer
  /// during its write callback). ASan: `DownloadTests`, `StreamTests`.
  public func write(_ bytes: UnsafeRawBufferPointer) throws {
    let done = try state.withLock { state -> TransferProgress in
      guard state.descriptor >= 0, var base = bytes.baseAddress else {
        throw Failure(description: "it was not opened for the body")
      }
      var left = bytes.count
      while left > 0 {
        let written = systemWrite(state.descriptor, base, left)
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else {
          throw refusedByDisk(&state, errno: errno)
        }
        left -= written
        base += written
      }
      state.completed += Int64(bytes.count)
      if seekable, state.completed - state.flushed >= Self.writeBehind {
        #if canImport(Glibc)
          _ = posix_fadvise(
            state.descriptor, off_t(state.flushed), off_t(state.completed - state.flushed),
            POSIX_FADV_DONTNEED)
        #endif
        state.flushed = state.completed
      }
      return TransferProgress(completed: state.completed, expected: state.expected)
    }
    progress?(done)
  }

  /// The body is complete: the file is flushed to disk and closed, and the last progress told.
  /// A 2xx answer with no body at all begins here with `head`.
  public func end(_ head: HTTPResponse) throws {
    if !state.withLock({ $0.began }) { try begin(head) }
    let done = try state.withLock { state -> TransferProgress in
      defer {
        if state.descriptor >= 0 { close(state.descriptor) }
        state.descriptor = -1
      }
      guard state.descriptor >= 0 else {
        throw Failure(description: "it was not opened for the body")
      }
      // A device or a pipe has nothing to sync; a file is whole on disk before it is moved.
      guard !seekable || fsync(state.descriptor) == 0 else {
        throw refusedByDisk(&state, errno: errno)
      }
      return TransferProgress(completed: state.completed, expected: state.expected)
    }
    progress?(done, always: true)
  }

  /// The bytes in the file now and the total announced, once begun.
  public var current: TransferProgress {
    state.withLock { TransferProgress(completed: $0.completed, expected: $0.expected) }
  }

  /// `bytes 100-199/1000` read as its first byte and its total (nil for `*`).
  static func contentRange(_ value: String) -> (first: Int64, total: Int64?)? {
    let parts = value.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, parts[0].lowercased() == "bytes" else { return nil }
    let rangeAndTotal = parts[1].split(separator: "/", maxSplits: 1)
    guard rangeAndTotal.count == 2,
      let first = rangeAndTotal[0].split(separator: "-").first.flatMap({ Int64($0) })
    else { return nil }
    return (first, rangeAndTotal[1] == "*" ? nil : Int64(rangeAndTotal[1]))
  }
}

/// The C `write`, which `BodyFile.write` hides by its name.
private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
  write(descriptor, bytes, count)
}

/// What the file system refused of a download's file: its reason in words, naming the system's
/// own (`it cannot be written (No space left on device)`), and the system's error as a value
/// an app can test (`POSIXError(.ENOSPC)`).
struct DiskFailure: Sendable {
  let reason: String
  let error: POSIXError?

  /// `what` failed for `errno`, or for no error the system named.
  init(_ what: String, errno code: Int32?) {
    guard let code, let known = POSIXErrorCode(rawValue: code) else {
      reason = what
      error = nil
      return
    }
    reason = "\(what) (\(String(cString: strerror(code))))"
    error = POSIXError(known)
  }
}
