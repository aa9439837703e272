import CCurl
import Foundation

/// Drives libcurl's multi handle on one thread of its own, looping on `curl_multi_poll`.
/// Callers queue what they want (a transfer to start, one to end) and wake the thread with
/// `curl_multi_wakeup` (libcurl 7.68 or later), the one call libcurl allows from another
/// thread; every other use of the multi handle, and of each transfer's easy handle, is on the
/// engine's thread.
final class CurlEngine: @unchecked Sendable {
  /// Used on the engine's thread only, but for `curl_multi_wakeup`.
  private let multi: UnsafeMutableRawPointer  // safe: a libcurl handle, used on the engine's thread
  /// Guards the queues and `stopping`, never held while libcurl works or waits.
  private let lock = NSLock()
  private var adding: [CurlTransfer] = []
  private var removing: [CurlTransfer] = []
  private var resuming: [CurlTransfer] = []
  private var stopping = false
  /// The transfers in the multi handle, by easy handle: the engine's thread's own.
  /// Safe: a libcurl handle, used on the engine's thread.
  private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]

  /// The time on the transport's clock: what a stall is measured on.
  private let elapsed: @Sendable () -> Duration
  /// No byte for this long ends a transfer (`Configuration.stallTimeout`).
  private let stallTimeout: Duration

  init(configuration: CurlTransport.Configuration, elapsed: @escaping @Sendable () -> Duration)
    throws
  {
    self.elapsed = elapsed
    self.stallTimeout = configuration.stallTimeout
    guard let multi = kernel_curl_multi_init() else {
      throw TransportError.unavailable(reason: "libcurl could not make a multi handle")
    }
    self.multi = multi
    kernel_curl_multi_setopt_long(
      multi, Int32(KERNEL_CURLMOPT_MAX_HOST_CONNECTIONS), configuration.maximumConnectionsPerHost)
    // The thread keeps the engine until it stops; `stop` is what ends it.
    let thread = Thread { [self] in run() }
    thread.name = "kernel.curl"
    thread.start()
  }

  /// Queues `transfer` to start, and wakes the engine's thread.
  func add(_ transfer: CurlTransfer) {
    let refused = lock.withLock {
      if !stopping { adding.append(transfer) }
      return stopping
    }
    if refused { transfer.finish(.failure(CancellationError())) }
    kernel_curl_multi_wakeup(multi)
  }

  /// Queues `transfer` to end where it stands (cancelled, or past its deadline).
  func remove(_ transfer: CurlTransfer) {
    lock.withLock { removing.append(transfer) }
    kernel_curl_multi_wakeup(multi)
  }

  /// Queues `transfer` to read again after its stream paused it.
  func unpause(_ transfer: CurlTransfer) {
    lock.withLock { resuming.append(transfer) }
    kernel_curl_multi_wakeup(multi)
  }

  /// Ends every transfer and the thread; the multi handle is freed by the thread as it ends.
  func stop() {
    lock.withLock { stopping = true }
    kernel_curl_multi_wakeup(multi)
  }

  private func run() {
    while true {
      let (added, removed, resumed, stop) = lock.withLock {
        defer {
          adding = []
          removing = []
          resuming = []
        }
        return (adding, removing, resuming, stopping)
      }
      if stop {
        let ending = Array(active.values) + added
        for transfer in ending { end(transfer) }
        kernel_curl_multi_cleanup(multi)
        for transfer in ending {
          transfer.finish(.failure(CancellationError()))
          transfer.stream?.finish(CancellationError())
        }
        return
      }
      for transfer in removed {
        end(transfer)
        // A stream's reader went away: it hears the end.
        transfer.stream?.finish(CancellationError())
      }
      for transfer in resumed {
        // CURLPAUSE_CONT, for a transfer still in the multi handle.
        if let easy = transfer.easy, active[easy] != nil {
          transfer.paused = false
          transfer.lastActivity = elapsed()
          kernel_curl_easy_pause(easy, 0)
        }
      }
      for transfer in added {
        transfer.clockNow = elapsed
        transfer.lastActivity = elapsed()
        start(transfer)
      }
      var running: Int32 = 0
      kernel_curl_multi_perform(multi, &running)
      for (transfer, result) in finishedTransfers() { transfer.finish(result) }
      endStalled()
      // libcurl shortens the wait to its own next timeout; a wake-up ends it at once. A quarter
      // of a second at most while anything runs, so a stall is seen within one.
      var ready: Int32 = 0
      kernel_curl_multi_poll(multi, active.isEmpty ? 1000 : 250, &ready)
    }
  }

  /// Ends each transfer that received nothing for `stallTimeout` on the transport's clock (a
  /// stream paused for its reader is waiting, not stalled). libcurl's own low-speed check
  /// averages over five seconds, so a 1 s limit ended a silent download after 6.2 s; this one
  /// holds within the poll's quarter second.
  private func endStalled() {
    let now = elapsed()
    for transfer in active.values where !transfer.paused {
      guard now - transfer.lastActivity >= stallTimeout else { continue }
      end(transfer)
      let stalled = TransportError.timedOut(host: transfer.host)
      transfer.finish(.failure(stalled))
      transfer.stream?.finish(stalled)
    }
  }

  /// Puts `transfer` into the multi handle, unless it already ended (cancelled before it got
  /// here).
  private func start(_ transfer: CurlTransfer) {
    guard !transfer.isFinished, transfer.easy == nil else { return }
    guard transfer.prepare(), let easy = transfer.easy,
      kernel_curl_multi_add_handle(multi, easy) == 0
    else {
      transfer.cleanUp()
      let failure =
        transfer.bodyFailure.map { TransportError.bodyUnreadable(reason: $0.description) }
        ?? TransportError.cannotConnect(host: transfer.host, reason: "libcurl refused the request")
      transfer.finish(.failure(failure))
      return
    }
    active[easy] = transfer
  }

  /// The transfers libcurl has finished, with their outcomes, their handles freed.
  private func finishedTransfers() -> [(CurlTransfer, Result<ApiResponse, any Error>)] {
    var done: [(CurlTransfer, Result<ApiResponse, any Error>)] = []
    var easy: UnsafeMutableRawPointer?  // safe: a libcurl handle, used on the engine's thread
    var code: Int32 = 0
    while kernel_curl_multi_next_done(multi, &easy, &code) == 1 {
      guard let finished = easy, let transfer = active[finished] else { continue }
      done.append((transfer, transfer.outcome(code)))
      end(transfer)
    }
    return done
  }

  /// Takes `transfer` out of the multi handle and frees its handles.
  private func end(_ transfer: CurlTransfer) {
    if let easy = transfer.easy, active.removeValue(forKey: easy) != nil {
      kernel_curl_multi_remove_handle(multi, easy)
    }
    transfer.cleanUp()
  }
}
