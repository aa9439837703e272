import CCurl
import Foundation

/// Drives libcurl's multi handle through its socket interface. The caller's thread adds its
/// transfer and lets libcurl send at once; the engine's thread waits on the sockets libcurl
/// names and finishes each transfer as its answer arrives. So a request costs one hand-over
/// between threads (the answer's), not two. Every use of the multi handle, from any thread, is
/// under `lock`; the engine's thread holds it only while libcurl works, never while it waits.
final class CurlEngine: @unchecked Sendable {
  private let multi: UnsafeMutableRawPointer
  private let poller: UnsafeMutableRawPointer
  private let lock = NSLock()
  // Guarded by `lock`:
  private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
  /// When libcurl wants its timeout action; nil when it wants none.
  private var timer: ContinuousClock.Instant?
  /// Until when the engine's thread is waiting; nil while it works (it reads `timer` before
  /// its next wait, so nobody needs to wake it).
  private var waitingUntil: ContinuousClock.Instant?
  private var stopping = false

  init(configuration: CurlTransport.Configuration) throws {
    guard let multi = kernel_curl_multi_init() else {
      throw TransportError.unavailable(reason: "libcurl could not make a multi handle")
    }
    guard let poller = kernel_poller_create() else {
      kernel_curl_multi_cleanup(multi)
      throw TransportError.unavailable(reason: "the system gave no descriptor to wait on sockets")
    }
    self.multi = multi
    self.poller = poller
    kernel_curl_multi_setopt_long(
      multi, Int32(KERNEL_CURLMOPT_MAX_HOST_CONNECTIONS), configuration.maximumConnectionsPerHost)
    let context = Unmanaged.passUnretained(self).toOpaque()
    kernel_curl_multi_setopt_pointer(multi, Int32(KERNEL_CURLMOPT_SOCKETDATA), context)
    kernel_curl_multi_setopt_socket_callback(multi) { _, socket, what, context, _ in
      guard let context else { return 0 }
      Unmanaged<CurlEngine>.fromOpaque(context).takeUnretainedValue().watch(socket, what)
      return 0
    }
    kernel_curl_multi_setopt_pointer(multi, Int32(KERNEL_CURLMOPT_TIMERDATA), context)
    kernel_curl_multi_setopt_timer_callback(multi) { _, milliseconds, context in
      guard let context else { return 0 }
      let engine = Unmanaged<CurlEngine>.fromOpaque(context).takeUnretainedValue()
      engine.timer = milliseconds < 0 ? nil : .now + .milliseconds(milliseconds)
      return 0
    }
    // The thread keeps the engine until it stops; `stop` is what ends it.
    let thread = Thread { [self] in run() }
    thread.name = "kernel.curl"
    thread.start()
  }

  /// Starts `transfer` on the calling thread: libcurl connects or sends as far as it can now.
  func add(_ transfer: CurlTransfer) {
    lock.lock()
    let refusedAsStopping = stopping
    var failed = stopping
    if !failed && !transfer.isFinished && transfer.easy == nil {
      if transfer.prepare(), let easy = transfer.easy,
        kernel_curl_multi_add_handle(multi, easy) == 0
      {
        active[easy] = transfer
        // The timeout libcurl just asked for (to start the transfer) is taken here and now.
        if let timer, timer <= .now { self.timer = nil }
        act(on: Int32(KERNEL_CURL_SOCKET_TIMEOUT), events: 0)
      } else {
        failed = true
        transfer.cleanUp()
      }
    }
    let done = finishedTransfers()
    wakeIfSooner()
    lock.unlock()
    if failed {
      transfer.finish(
        .failure(
          refusedAsStopping
            ? CancellationError()
            : TransportError.cannotConnect(
              host: transfer.host, reason: "libcurl refused the request")))
    }
    for (transfer, result) in done { transfer.finish(result) }
  }

  /// Ends `transfer` where it stands (cancelled, or past its deadline) and frees its handle.
  func remove(_ transfer: CurlTransfer) {
    lock.lock()
    end(transfer)
    wakeIfSooner()
    lock.unlock()
  }

  /// Ends every transfer and the thread; the multi handle is freed by the thread as it ends.
  func stop() {
    lock.lock()
    stopping = true
    lock.unlock()
    kernel_poller_wake(poller)
  }

  /// libcurl's wish for `socket`. Under `lock`, inside a libcurl call.
  private func watch(_ socket: Int32, _ what: Int32) {
    switch what {
    case Int32(KERNEL_CURL_POLL_REMOVE): kernel_poller_unwatch(poller, socket)
    case Int32(KERNEL_CURL_POLL_IN): kernel_poller_watch(poller, socket, 1, 0)
    case Int32(KERNEL_CURL_POLL_OUT): kernel_poller_watch(poller, socket, 0, 1)
    case Int32(KERNEL_CURL_POLL_INOUT): kernel_poller_watch(poller, socket, 1, 1)
    default: break
    }
  }

  /// Lets libcurl act on a ready socket, or on its timeout. Under `lock`.
  private func act(on socket: Int32, events: Int32) {
    var running: Int32 = 0
    kernel_curl_multi_socket_action(multi, socket, events, &running)
  }

  /// The transfers libcurl has finished, with their outcomes, their handles freed. Under `lock`.
  private func finishedTransfers() -> [(CurlTransfer, Result<ApiResponse, any Error>)] {
    var done: [(CurlTransfer, Result<ApiResponse, any Error>)] = []
    var easy: UnsafeMutableRawPointer?
    var code: Int32 = 0
    while kernel_curl_multi_next_done(multi, &easy, &code) == 1 {
      guard let finished = easy, let transfer = active[finished] else { continue }
      done.append((transfer, transfer.outcome(code)))
      end(transfer)
    }
    return done
  }

  /// Takes `transfer` out of the multi handle and frees it. Under `lock`.
  private func end(_ transfer: CurlTransfer) {
    if let easy = transfer.easy, active.removeValue(forKey: easy) != nil {
      kernel_curl_multi_remove_handle(multi, easy)
    }
    transfer.cleanUp()
  }

  /// Wakes the engine's thread when libcurl's timer now falls before the end of its wait.
  /// Under `lock`, on a caller's thread.
  private func wakeIfSooner() {
    if let timer, let waitingUntil, timer < waitingUntil { kernel_poller_wake(poller) }
  }

  private func run() {
    var sockets = [Int32](repeating: 0, count: 32)
    var events = [Int32](repeating: 0, count: 32)
    while true {
      lock.lock()
      if stopping {
        let ending = Array(active.values)
        for transfer in ending { end(transfer) }
        kernel_curl_multi_cleanup(multi)
        lock.unlock()
        kernel_poller_destroy(poller)
        for transfer in ending { transfer.finish(.failure(CancellationError())) }
        return
      }
      // Without a timer, libcurl has nothing under way; the wait still ends within a second,
      // so that a caller whose transfer asks for a timer a second or more away (as every
      // keep-alive request does) need not wake this thread.
      let until = timer ?? .now + .seconds(1)
      waitingUntil = until
      lock.unlock()
      let left = ContinuousClock.now.duration(to: until)
      let ready = kernel_poller_wait(
        poller, left <= .zero ? 0 : Int32(clamping: left.milliseconds), &sockets, &events, 32)
      lock.lock()
      waitingUntil = nil
      for index in 0..<max(0, Int(ready)) { act(on: sockets[index], events: events[index]) }
      if let timer, timer <= .now {
        self.timer = nil
        act(on: Int32(KERNEL_CURL_SOCKET_TIMEOUT), events: 0)
      }
      let done = finishedTransfers()
      lock.unlock()
      for (transfer, result) in done { transfer.finish(result) }
    }
  }
}
