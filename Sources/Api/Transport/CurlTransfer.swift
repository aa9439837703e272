import CCurl
import Foundation
import HTTPTypes
import Synchronization

/// One request on its way: its options, what came back so far, and the caller waiting for it.
/// What it receives is touched only on the engine's thread; the waiting caller is resumed once,
/// by whichever comes first: the answer, cancellation or the deadline.
final class CurlTransfer: @unchecked Sendable {
  let request: HTTPRequest
  let url: String
  let host: String
  let body: RequestBody?
  /// Where a 200 or 206 is written, for a download.
  let file: BodyFile?
  /// Whether this answer's body goes to `file`, decided at its first byte.
  var savesToFile: Bool?
  /// Why the body could not be written to `file`, when that ended the transfer.
  var fileFailure: String?
  /// Where a 2xx's body goes as it arrives, for a stream; set before the transfer starts. Weak:
  /// a stream its reader dropped ends the exchange (`ResponseStream.deinit`).
  weak var stream: ResponseStream?
  /// Whether this transfer was made for a stream.
  var isStream = false
  /// Whether this answer's body goes to `stream` (its caller already has the head).
  var streaming = false
  /// Whether the transfer has no whole-exchange deadline and no size limit: a download or a
  /// stream, ended only by a stall.
  var isLong: Bool { file != nil || isStream }
  let configuration: CurlTransport.Configuration
  /// Whether libcurl keeps the whole-exchange deadline (on the real clock).
  let deadlineByLibcurl: Bool
  /// Touched only on the engine's thread.
  var easy: UnsafeMutableRawPointer?  // safe: a libcurl handle, used on the engine's thread
  var headerList: UnsafeMutableRawPointer?  // safe: a libcurl handle, used on the engine's thread
  var received = Data()
  var fields = HTTPFields()
  var tooLarge = false
  /// Reads the request's body as libcurl asks for it; touched only on the engine's thread.
  var reader: BodyReader?
  /// Why the body could not be read, when that ended the transfer.
  var bodyFailure: BodyUnreadable?
  /// How many header bytes arrived, so an "out of memory" after them is read as a head too large.
  var headerBytes = 0
  /// The transport's clock, as time since the engine started; set by the engine.
  var clockNow: (@Sendable () -> Duration)?
  /// When a chunk of head or body last arrived (or the transfer started, or its reader resumed
  /// it), on the transport's clock: the engine ends a transfer silent for `stallTimeout`.
  /// Engine's thread.
  var lastActivity: Duration = .zero
  /// Whether libcurl holds it paused for a stream's reader. Engine's thread.
  var paused = false

  private let waiter = Mutex<(CheckedContinuation<ApiResponse, any Error>?, finished: Bool)>(
    (nil, false))

  init(
    request: HTTPRequest, url: String, host: String, body: RequestBody?, file: BodyFile?,
    configuration: CurlTransport.Configuration, deadlineByLibcurl: Bool
  ) {
    self.request = request
    self.url = url
    self.host = host
    self.body = body
    self.file = file
    self.configuration = configuration
    self.deadlineByLibcurl = deadlineByLibcurl
  }

  /// Keeps the caller's continuation; false when the transfer already ended (cancelled).
  func start(_ continuation: CheckedContinuation<ApiResponse, any Error>) -> Bool {
    let finished = waiter.withLock { waiter -> Bool in
      if !waiter.finished { waiter.0 = continuation }
      return waiter.finished
    }
    if finished { continuation.resume(throwing: CancellationError()) }
    return !finished
  }

  var isFinished: Bool { waiter.withLock { $0.finished } }

  /// Resumes the caller with `result`, unless it was resumed already.
  func finish(_ result: Result<ApiResponse, any Error>) {
    let continuation = waiter.withLock { waiter -> CheckedContinuation<ApiResponse, any Error>? in
      guard !waiter.finished else { return nil }
      waiter.finished = true
      defer { waiter.0 = nil }
      return waiter.0
    }
    continuation?.resume(with: result)
  }

  /// Body bytes from libcurl: written to the file of a download's 200 or 206; else kept, or
  /// refused past the limit (which ends the transfer).
  func receive(_ data: UnsafeRawBufferPointer) -> Int {
    if let clockNow { lastActivity = clockNow() }
    if isStream {
      guard let stream else { return 0 }
      if !streaming, (200..<300).contains(head.status.code) {
        streaming = true
        var response = ApiResponse(head)
        response.stream = stream
        finish(.success(response))
      }
      if streaming {
        // CURL_WRITEFUNC_PAUSE: libcurl keeps these bytes and hands them again once resumed.
        guard stream.offer(Data(data)) else {
          paused = true
          return 0x1000_0001
        }
        return data.count
      }
    }
    if let file {
      if savesToFile == nil {
        let head = self.head
        savesToFile = BodyFile.takes(head.status.code)
        if savesToFile == true {
          do { try file.begin(head) } catch {
            fileFailure = "\(error)"
            return 0
          }
        }
      }
      if savesToFile == true {
        do { try file.write(data) } catch {
          fileFailure = "\(error)"
          return 0
        }
        return data.count
      }
    }
    guard received.count + data.count <= configuration.maximumBodyBytes else {
      tooLarge = true
      return 0
    }
    received.append(contentsOf: data)
    return data.count
  }

  /// The next bytes of the request's body for libcurl; 0 at its end, or `abort` when a file
  /// cannot be read (the transfer then ends with error 42).
  func send(into buffer: UnsafeMutableRawBufferPointer, abort: Int) -> Int {
    guard let reader else { return 0 }
    do { return try reader.read(into: buffer) } catch {
      bodyFailure = error as? BodyUnreadable ?? BodyUnreadable(file: "?", reason: "\(error)")
      return abort
    }
  }

  /// One header line from libcurl; a status line starts a new head (after a `100 Continue`).
  func receiveHeader(_ data: UnsafeRawBufferPointer) {
    if let clockNow { lastActivity = clockNow() }
    headerBytes += data.count
    if data.starts(with: "HTTP/".utf8) {
      fields = HTTPFields()
      return
    }
    guard let colon = data.firstIndex(of: UInt8(ascii: ":")),
      let name = HTTPField.Name(String(decoding: Self.trimmed(data[..<colon]), as: UTF8.self))
    else { return }
    let value = Self.trimmed(data[(colon + 1)...])
    fields.append(HTTPField(name: name, value: String(decoding: value, as: UTF8.self)))
  }

  /// `bytes` without the spaces, tabs and line ends around them.
  private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>)
    -> Slice<UnsafeRawBufferPointer>
  {
    let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    var start = bytes.startIndex
    var end = bytes.endIndex
    while start < end, blank(bytes[start]) { start += 1 }
    while end > start, blank(bytes[end - 1]) { end -= 1 }
    return bytes[start..<end]
  }

  /// The status and header fields received so far. On the engine's thread.
  var head: HTTPResponse {
    var status = 0
    if let easy {
      kernel_curl_easy_getinfo_long(easy, Int32(KERNEL_CURLINFO_RESPONSE_CODE), &status)
    }
    return HTTPResponse(status: .init(code: status), headerFields: fields)
  }

  /// What libcurl measured of the exchange. On the engine's thread, before the handle is freed.
  var metrics: RequestMetrics? {
    guard let easy else { return nil }
    func value(_ info: Int32) -> Int64? {
      var value: Int64 = 0
      return kernel_curl_easy_getinfo_offset(easy, info, &value) == 0 ? value : nil
    }
    func time(_ info: Int32) -> Duration? { value(info).map { .microseconds($0) } }
    let tls = time(Int32(KERNEL_CURLINFO_APPCONNECT_TIME_T))
    return RequestMetrics(
      connect: time(Int32(KERNEL_CURLINFO_CONNECT_TIME_T)),
      tls: tls == .zero ? nil : tls,
      firstByte: time(Int32(KERNEL_CURLINFO_STARTTRANSFER_TIME_T)),
      total: time(Int32(KERNEL_CURLINFO_TOTAL_TIME_T)) ?? .zero,
      bytesSent: value(Int32(KERNEL_CURLINFO_SIZE_UPLOAD_T)) ?? 0,
      bytesReceived: value(Int32(KERNEL_CURLINFO_SIZE_DOWNLOAD_T)) ?? 0)
  }

  /// What a finished transfer means, by libcurl's result code: a download's file is completed
  /// (or begun and completed, for an empty body) before its answer is given.
  func outcome(_ code: Int32) -> Result<ApiResponse, any Error> {
    let result = answer(code)
    if streaming, let stream {
      // The caller has the head already: the end, or the failure, goes to the stream.
      switch result {
      case .success(let response): stream.finish(nil, metrics: response.metrics)
      case .failure(let error): stream.finish(error, metrics: metrics)
      }
      return result
    }
    guard let file, case .success(let response) = result, BodyFile.takes(response.status) else {
      return result
    }
    do { try file.end(response.head) } catch {
      return .failure(TransportError.cannotSave(file: file.url.path, reason: "\(error)"))
    }
    return result
  }

  private func answer(_ code: Int32) -> Result<ApiResponse, any Error> {
    if let file, let fileFailure {
      return .failure(TransportError.cannotSave(file: file.url.path, reason: fileFailure))
    }
    if let bodyFailure, code == 42 {
      return .failure(TransportError.bodyUnreadable(reason: bodyFailure.description))
    }
    if tooLarge || code == 63 {
      return .failure(TransportError.tooLarge(host: host, limit: configuration.maximumBodyBytes))
    }
    // libcurl answers "out of memory" (27) for a response head past its 100 KB limit
    // (CURL_MAX_HTTP_HEADER); with headers received and memory to spare, that is what it means.
    if code == 27 && headerBytes > 0 {
      return .failure(TransportError.headerTooLarge(host: host))
    }
    switch code {
    case 0:
      var status = 0
      if let easy {
        kernel_curl_easy_getinfo_long(easy, Int32(KERNEL_CURLINFO_RESPONSE_CODE), &status)
      }
      guard (100..<1000).contains(status) else {
        return .failure(TransportError.cannotConnect(host: host, reason: "the answer was not HTTP"))
      }
      // libcurl decoded the body: the coding and the length on the wire no longer describe it.
      if fields[.contentEncoding] != nil {
        fields[.contentEncoding] = nil
        fields[.contentLength] = nil
      }
      var response = ApiResponse(
        HTTPResponse(status: .init(code: status), headerFields: fields), body: received)
      response.metrics = metrics
      return .success(response)
    case 6: return .failure(TransportError.unknownHost(host: host))
    case 61:
      let reason = kernel_curl_easy_strerror(code).map { String(cString: $0) } ?? "error 61"
      return .failure(TransportError.undecodable(host: host, reason: reason.lowercased()))
    case 7: return .failure(TransportError.cannotConnect(host: host, reason: "connection refused"))
    case 28: return .failure(TransportError.timedOut(host: host))
    case 8, 18, 52, 55, 56:
      return .failure(TransportError.cannotConnect(host: host, reason: "connection lost"))
    default:
      let reason = kernel_curl_easy_strerror(code).map { String(cString: $0) } ?? "error \(code)"
      return .failure(TransportError.cannotConnect(host: host, reason: reason.lowercased()))
    }
  }

  /// Makes the easy handle with every option. On the engine's thread.
  func prepare() -> Bool {
    guard let easy = kernel_curl_easy_init() else { return false }
    self.easy = easy
    // Safe unretained: the engine's `active` keeps this transfer alive while its easy handle is
    // in the multi handle, the only time libcurl calls the callbacks below with it.
    let context = Unmanaged.passUnretained(self).toOpaque()
    func long(_ option: Int32, _ value: Int) { kernel_curl_easy_setopt_long(easy, option, value) }
    _ = url.withCString { kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_URL), $0) }
    long(Int32(KERNEL_CURLOPT_PROTOCOLS), Int(KERNEL_CURLPROTO_HTTP | KERNEL_CURLPROTO_HTTPS))
    long(Int32(KERNEL_CURLOPT_NOSIGNAL), 1)
    long(Int32(KERNEL_CURLOPT_TCP_NODELAY), 1)
    long(Int32(KERNEL_CURLOPT_FOLLOWLOCATION), 0)
    long(Int32(KERNEL_CURLOPT_HTTP_VERSION), Int(KERNEL_CURL_HTTP_VERSION_1_1))
    long(
      Int32(KERNEL_CURLOPT_CONNECTTIMEOUT_MS),
      max(1, configuration.connectTimeout.wholeMilliseconds))
    // On another clock than the real one, no CURLOPT_TIMEOUT: a real-time limit would end a
    // request a test holds on its own.
    // A download or a stream has no whole-exchange deadline and no size limit: it ends when it
    // stalls.
    if !isLong {
      if deadlineByLibcurl {
        long(
          Int32(KERNEL_CURLOPT_TIMEOUT_MS), max(1, configuration.resourceTimeout.wholeMilliseconds)
        )
      }
      kernel_curl_easy_setopt_offset(
        easy, Int32(KERNEL_CURLOPT_MAXFILESIZE_LARGE), Int64(configuration.maximumBodyBytes))
    } else {
      // Larger chunks: fewer writes to the file.
      long(Int32(KERNEL_CURLOPT_BUFFERSIZE), 512 << 10)
    }
    // "": every coding this libcurl decodes, listed in Accept-Encoding and decoded on arrival.
    // Not for a download: its file holds the bytes as sent, so a `Range` resumes them (a range
    // counts the coded bytes) and a body coded unasked is kept as it came, never expanded (300
    // KB of gzip had become a 300 MB file).
    if file == nil {
      _ = "".withCString {
        kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_ACCEPT_ENCODING), $0)
      }
    }
    kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_WRITEDATA), context)
    kernel_curl_easy_setopt_callback(easy, Int32(KERNEL_CURLOPT_WRITEFUNCTION)) {
      data, size, count, context in
      guard let data, let context else { return 0 }
      return CurlTransfer.of(context).receive(
        UnsafeRawBufferPointer(start: data, count: size * count))
    }
    kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_HEADERDATA), context)
    kernel_curl_easy_setopt_callback(easy, Int32(KERNEL_CURLOPT_HEADERFUNCTION)) {
      data, size, count, context in
      guard let data, let context else { return 0 }
      CurlTransfer.of(context).receiveHeader(
        UnsafeRawBufferPointer(start: data, count: size * count))
      return size * count
    }
    var lines = request.headerFields.map { "\($0.name.rawName): \($0.value)" }
    // Nothing of curl's own beyond what the request says: no `Expect: 100-continue`, and no
    // form content type for a body that names none.
    lines.append("Expect:")
    switch request.method {
    case .get: long(Int32(KERNEL_CURLOPT_HTTPGET), 1)
    case .head: long(Int32(KERNEL_CURLOPT_NOBODY), 1)
    default:
      _ = request.method.rawValue.withCString {
        kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_CUSTOMREQUEST), $0)
      }
    }
    if let body, request.method != .get, request.method != .head {
      let length: Int64
      do { length = try body.length() } catch {
        bodyFailure = error as? BodyUnreadable
        return false
      }
      if request.headerFields[.contentType] == nil { lines.append("Content-Type:") }
      // POST sends a body of the length given, read by the callbacks below; the method itself
      // is CUSTOMREQUEST's.
      long(Int32(KERNEL_CURLOPT_POST), 1)
      kernel_curl_easy_setopt_offset(easy, Int32(KERNEL_CURLOPT_POSTFIELDSIZE_LARGE), length)
      reader = BodyReader(body)
      kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_READDATA), context)
      kernel_curl_easy_setopt_callback(easy, Int32(KERNEL_CURLOPT_READFUNCTION)) {
        data, size, count, context in
        guard let data, let context else { return 0 }
        // CURL_READFUNC_ABORT.
        return CurlTransfer.of(context).send(
          into: UnsafeMutableRawBufferPointer(start: data, count: size * count),
          abort: 0x1000_0000)
      }
      // libcurl rewinds the body to send it again on a connection it had to open anew.
      kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_SEEKDATA), context)
      kernel_curl_easy_setopt_seek(easy, Int32(KERNEL_CURLOPT_SEEKFUNCTION)) {
        context, offset, origin in
        // Only back to the start (SEEK_SET, 0); 2 is CURL_SEEKFUNC_CANTSEEK.
        guard let context, offset == 0, origin == 0 else { return 2 }
        CurlTransfer.of(context).reader?.rewind()
        return 0
      }
    }
    for line in lines { headerList = line.withCString { kernel_curl_slist_append(headerList, $0) } }
    kernel_curl_easy_setopt_pointer(easy, Int32(KERNEL_CURLOPT_HTTPHEADER), headerList)
    return true
  }

  /// The transfer a libcurl callback's context points at.
  /// Safe: libcurl hands back the context this transfer gave it, and `active` keeps the
  /// transfer alive until libcurl is done with it.
  private static func of(_ context: UnsafeMutableRawPointer) -> CurlTransfer {
    Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()  // safe: kept in `active`
  }

  /// Frees the handle and the header list. On the engine's thread, once out of the multi.
  func cleanUp() {
    if let easy { kernel_curl_easy_cleanup(easy) }
    if let headerList { kernel_curl_slist_free_all(headerList) }
    easy = nil
    headerList = nil
  }
}
