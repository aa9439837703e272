import CCurl
import Foundation
import HTTPTypes
import Synchronization

/// The transport on Linux: libcurl's multi interface, driven by one thread of the transport's
/// own looping on `curl_multi_poll` (see `CurlEngine`; libcurl 7.68 or later).
/// libcurl is opened with `dlopen` when the first request is made: a process that sends
/// nothing never loads it.
///
/// - Connections are kept alive and reused between requests to the same origin.
/// - No redirect is followed and no authentication is answered: the 3xx or 401 comes back, and
///   the client decides (see `Redirects`).
/// - `connectTimeout` bounds making a connection; `stallTimeout` ends an exchange that receives
///   nothing for that long; `resourceTimeout` bounds the whole exchange, kept on `clock` so a
///   test can pass it by advancing a test clock.
/// - `Accept-Encoding` names every content coding this libcurl decodes (gzip and deflate;
///   brotli and zstd where it was built with them), and a body so coded arrives decoded, without
///   its `Content-Encoding` and `Content-Length`. A download asks for none and decodes nothing:
///   its file holds the bytes as sent, so its size is what the server sent.
/// - A body over `maximumBodyBytes`, counted after decoding (a gzip bomb is refused however small
///   it is on the wire), ends the exchange with `TransportError.tooLarge`.
/// - A request's body is read as it is sent, a chunk at a time (`BodyReader`): a file is never
///   read whole.
/// - Cancelling the calling task ends the request at once: its transfer is removed and its
///   connection closed.
/// - IPv4 and IPv6 addresses, literal (`http://[::1]:8080/`) or by name.
///
/// When libcurl cannot be loaded, every request fails with `TransportError.unavailable`, one
/// sentence naming the library and the package to install.
public final class CurlTransport: Transport {
  /// Its timeouts and limits.
  public struct Configuration: Sendable {
    /// How long a connection may take to be made.
    public var connectTimeout: Duration = .seconds(30)
    /// How long an exchange may go without a byte.
    public var stallTimeout: Duration = .seconds(30)
    /// How long one exchange may take in all.
    public var resourceTimeout: Duration = .seconds(60)
    /// The largest body read whole (64 MiB); a larger one is `tooLarge`.
    public var maximumBodyBytes = 64 << 20
    /// Connections open to one host at once; requests beyond it wait for one to be free.
    public var maximumConnectionsPerHost = 64
    /// The library opened: libcurl's soname on Linux.
    public var library = CurlTransport.defaultLibrary

    /// The defaults.
    public init() {}
  }

  #if canImport(Darwin)
    public static let defaultLibrary = "libcurl.4.dylib"
  #else
    /// libcurl's soname.
    public static let defaultLibrary = "libcurl.so.4"
  #endif

  /// Its timeouts and limits.
  public let configuration: Configuration
  /// The clock of its deadlines.
  public let clock: any Clock<Duration>
  private let engine = Mutex<CurlEngine?>(nil)

  /// A transport of `configuration`, its deadlines on `clock`; libcurl is opened by the first
  /// request.
  public init(
    configuration: Configuration = Configuration(), clock: any Clock<Duration> = ContinuousClock()
  ) {
    self.configuration = configuration
    self.clock = clock
  }

  deinit { engine.withLock { $0?.stop() } }

  /// Whether libcurl can be loaded here; nil when it can, else the sentence a request fails
  /// with.
  public static func unavailability(library: String = defaultLibrary) -> String? {
    var error = [CChar](repeating: 0, count: 512)
    guard kernel_curl_load(library, &error, error.count) != 0 else { return nil }
    let reason = String(
      decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return "\(library) could not be loaded (\(reason)); install libcurl 7.68 or later"
      + " (Debian and Ubuntu: apt-get install libcurl4; Fedora: dnf install libcurl)"
  }

  /// Loads libcurl, or throws the sentence a request would fail with.
  public func checkAvailability() throws {
    if let reason = Self.unavailability(library: configuration.library) {
      throw TransportError.unavailable(reason: reason)
    }
  }

  private func running() throws -> CurlEngine {
    let elapsed = clock.timeSinceNow()
    return try engine.withLock { engine in
      if let engine { return engine }
      if let reason = Self.unavailability(library: configuration.library) {
        throw TransportError.unavailable(reason: reason)
      }
      let started = try CurlEngine(configuration: configuration, elapsed: elapsed)
      engine = started
      return started
    }
  }

  public func send(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
    try await exchange(request, body: body, saving: nil, streaming: false)
  }

  /// Answers once the head of a 2xx is in; its body is handed to the stream from libcurl's
  /// buffer as it arrives, and the transfer is paused while `ResponseStream.bufferLimit` bytes
  /// wait for the reader. Only `stallTimeout` ends a stream that slows to nothing.
  public func stream(_ request: HTTPRequest, body: RequestBody?) async throws -> ApiResponse {
    var response = try await exchange(request, body: body, saving: nil, streaming: true)
    if (200..<300).contains(response.status), response.stream == nil {
      // A 2xx that ended before its first byte (an empty body).
      response.stream = ResponseStream(whole: response.body, metrics: response.metrics)
      response.body = Data()
    }
    return response
  }

  /// Writes a 200 or 206 to `file` from libcurl's buffer as it arrives (no copy held), with no
  /// body limit and no whole-exchange deadline: only `stallTimeout` ends a download that
  /// slows to nothing.
  public func send(_ request: HTTPRequest, body: RequestBody?, saving file: BodyFile)
    async throws -> ApiResponse
  {
    try await exchange(request, body: body, saving: file, streaming: false)
  }

  private func exchange(
    _ request: HTTPRequest, body: RequestBody?, saving file: BodyFile?, streaming: Bool
  ) async throws -> ApiResponse {
    try Task.checkCancellation()
    guard let url = request.target, let host = request.origin?.host else {
      throw TransportError.cannotConnect(host: "?", reason: "the request has no address")
    }
    let engine = try running()
    // On the real clock libcurl keeps the deadline itself (error 28, timedOut); on any other
    // clock a watchdog task sleeps on it, so a test clock decides when the deadline passes.
    let realTime = clock is ContinuousClock
    let transfer = CurlTransfer(
      request: request, url: url, host: host, body: body, file: file,
      configuration: configuration, deadlineByLibcurl: realTime)
    // Held here until the caller has it (in the response) or the exchange ended. It keeps
    // this transport, whose end would stop the engine, as long as it may be read.
    let stream: ResponseStream? =
      streaming
      ? ResponseStream(
        resume: { [self, weak transfer] in
          if let transfer { withExtendedLifetime(self) { engine.unpause(transfer) } }
        },
        stop: { [self, weak transfer] in
          if let transfer { withExtendedLifetime(self) { engine.remove(transfer) } }
        }) : nil
    transfer.stream = stream
    transfer.isStream = streaming
    let watchdog =
      realTime || file != nil || streaming
      ? nil
      : Task { [clock, configuration] in
        try await clock.sleep(for: configuration.resourceTimeout)
        transfer.finish(.failure(TransportError.timedOut(host: host)))
        engine.remove(transfer)
      }
    defer {
      watchdog?.cancel()
      withExtendedLifetime(stream) {}
    }
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        if transfer.start(continuation) { engine.add(transfer) }
      }
    } onCancel: {
      transfer.finish(.failure(CancellationError()))
      engine.remove(transfer)
    }
  }
}

extension Clock where Duration == Swift.Duration {
  /// The time since now on this clock, read on the engine's thread: what a stall is measured
  /// on, so a test clock decides when a silent transfer has stalled.
  fileprivate func timeSinceNow() -> @Sendable () -> Swift.Duration {
    let start = now
    return { start.duration(to: self.now) }
  }
}
