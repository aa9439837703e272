import Foundation
import HTTPTypes
import Synchronization

/// The body of a streamed answer (`ApiClient.stream`) as it arrives: chunks of bytes, in
/// order, with back-pressure. At most `bufferLimit` bytes wait for the reader; past that the
/// transport stops reading from the connection until the reader catches up, so a slow reader
/// keeps memory flat. Iterate it once. Cancelling the reading task, or `cancel()`, ends the
/// exchange and closes its connection.
public final class ResponseStream: AsyncSequence, Sendable {
  public typealias Element = Data

  /// The bytes that may wait for the reader before the transport pauses.
  public static let bufferLimit = 1 << 20

  private struct State {
    var chunks: [Data] = []
    var start = 0
    var buffered = 0
    var peak = 0
    var paused = false
    var ended = false
    var failure: (any Error)?
    var reader: CheckedContinuation<Data?, any Error>?
    /// What the transport measured of the exchange, once it ended.
    var metrics: RequestMetrics?
    /// Told once, when the exchange ends: its metrics, and its failure if any.
    var whenEnded: (@Sendable (RequestMetrics?, (any Error)?) -> Void)?
  }

  private let state = Mutex(State())
  /// Tells the transport to read again after a pause, and to end the exchange.
  private let resume: @Sendable () -> Void
  private let stop: @Sendable () -> Void

  /// A stream the transport fills with `offer` and ends with `finish`; `resume` asks it to read
  /// again after `offer` refused, `stop` to end the exchange.
  public init(
    resume: @escaping @Sendable () -> Void = {}, stop: @escaping @Sendable () -> Void = {}
  ) {
    self.resume = resume
    self.stop = stop
  }

  /// Whether the transport is paused now, waiting for the reader.
  var isPaused: Bool { state.withLock { $0.paused } }

  /// Whether the transport has ended the stream (its last bytes may still wait for the reader).
  var hasEnded: Bool { state.withLock { $0.ended } }

  /// The most bytes that ever waited for the reader.
  var peakBuffered: Int { state.withLock { $0.peak } }

  /// A stream dropped before its end ends the exchange: nobody will read the rest.
  deinit {
    if !state.withLock({ $0.ended }) { stop() }
  }

  /// A stream of bytes already had whole, from an exchange that cost `metrics`.
  public convenience init(whole data: Data, metrics: RequestMetrics? = nil) {
    self.init()
    if !data.isEmpty { _ = offer(data) }
    finish(nil, metrics: metrics)
  }

  /// Calls `body` once, when the exchange has ended (now, if it has), with what the transport
  /// measured of it and its failure, if any: how a client tells its monitors a stream's end.
  func whenEnded(_ body: @escaping @Sendable (RequestMetrics?, (any Error)?) -> Void) {
    let ended = state.withLock { state -> (RequestMetrics?, (any Error)?)? in
      guard state.ended else {
        state.whenEnded = body
        return nil
      }
      return (state.metrics, state.failure)
    }
    if let ended { body(ended.0, ended.1) }
  }

  /// Takes `bytes`, unless `bufferLimit` bytes already wait: then nothing is taken and the
  /// transport is asked to pause until the reader resumes it. A reader waiting gets them at
  /// once.
  public func offer(_ bytes: Data) -> Bool {
    let reader = state.withLock { state -> CheckedContinuation<Data?, any Error>?? in
      if let reader = state.reader {
        state.reader = nil
        return .some(reader)
      }
      guard state.buffered < Self.bufferLimit else {
        state.paused = true
        return nil
      }
      state.chunks.append(bytes)
      state.buffered += bytes.count
      state.peak = Swift.max(state.peak, state.buffered)
      return .some(nil)
    }
    guard let reader else { return false }
    reader?.resume(returning: bytes)
    return true
  }

  /// Ends the stream: after what waits, the reader gets the end, or `failure`. `metrics` are
  /// what the transport measured of the whole exchange.
  public func finish(_ failure: (any Error)?, metrics: RequestMetrics? = nil) {
    let (reader, told) = state.withLock {
      state -> (
        CheckedContinuation<Data?, any Error>?, (@Sendable (RequestMetrics?, (any Error)?) -> Void)?
      ) in
      guard !state.ended else { return (nil, nil) }
      state.ended = true
      state.failure = failure
      state.metrics = metrics
      defer { state.whenEnded = nil }
      guard state.start == state.chunks.count else { return (nil, state.whenEnded) }
      defer { state.reader = nil }
      return (state.reader, state.whenEnded)
    }
    told?(metrics, failure)
    if let failure { reader?.resume(throwing: failure) } else { reader?.resume(returning: nil) }
  }

  /// Ends the exchange: the transport closes its connection, and the reader gets
  /// `CancellationError`, even when the last bytes have arrived and wait unread (what waits is
  /// dropped; an end the reader has already had stays its end).
  public func cancel() {
    let (reader, told) = state.withLock {
      state -> (
        CheckedContinuation<Data?, any Error>?, (@Sendable (RequestMetrics?, (any Error)?) -> Void)?
      ) in
      state.chunks.removeAll()
      state.start = 0
      state.buffered = 0
      state.ended = true
      state.failure = CancellationError()
      defer {
        state.reader = nil
        state.whenEnded = nil
      }
      return (state.reader, state.whenEnded)
    }
    told?(nil, CancellationError())
    reader?.resume(throwing: CancellationError())
    stop()
  }

  /// The next chunk, nil at the end.
  func next() async throws -> Data? {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        enum Step {
          case chunk(Data, resume: Bool)
          case end((any Error)?)
          case wait
        }
        let step = state.withLock { state -> Step in
          if state.start < state.chunks.count {
            let chunk = state.chunks[state.start]
            state.start += 1
            state.buffered -= chunk.count
            if state.start == state.chunks.count {
              state.chunks.removeAll(keepingCapacity: true)
              state.start = 0
            }
            let resume = state.paused && state.buffered < Self.bufferLimit / 2
            if resume { state.paused = false }
            return .chunk(chunk, resume: resume)
          }
          if state.ended { return .end(state.failure) }
          if state.paused {
            state.paused = false
            state.reader = continuation
            return .chunk(Data(), resume: true)
          }
          state.reader = continuation
          return .wait
        }
        switch step {
        case .chunk(let chunk, let resume):
          if resume { self.resume() }
          if !chunk.isEmpty || !resume { continuation.resume(returning: chunk) }
        case .end(let failure):
          if let failure {
            continuation.resume(throwing: failure)
          } else {
            continuation.resume(returning: nil)
          }
        case .wait: break
        }
      }
    } onCancel: {
      cancel()
    }
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    let stream: ResponseStream

    public mutating func next() async throws -> Data? { try await stream.next() }
  }

  public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(stream: self) }

  /// Every chunk gathered, up to `limit` bytes (more throws `TransportError.tooLarge`).
  public func collect(upTo limit: Int) async throws -> Data {
    var data = Data()
    for try await chunk in self {
      guard data.count + chunk.count <= limit else {
        cancel()
        throw TransportError.tooLarge(host: "", limit: limit)
      }
      data.append(chunk)
    }
    return data
  }

  /// The body as lines of UTF-8 text, without their `\n` or `\r\n`; a last line without an
  /// end is one too.
  public var lines: AsyncThrowingStream<String, any Error> {
    AsyncThrowingStream { continuation in
      let reading = Task {
        var pending = Data()
        do {
          for try await chunk in self {
            pending.append(chunk)
            while let end = pending.firstIndex(of: UInt8(ascii: "\n")) {
              var line = pending[pending.startIndex..<end]
              if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
              continuation.yield(String(decoding: line, as: UTF8.self))
              pending = Data(pending[(end + 1)...])
            }
          }
          if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in reading.cancel() }
    }
  }

  /// The body as server-sent events (`text/event-stream`): each event's type, data (its `data:`
  /// lines joined by `\n`), id and retry, dispatched at a blank line; comments are skipped.
  public var events: AsyncThrowingStream<ServerSentEvent, any Error> {
    AsyncThrowingStream { continuation in
      let reading = Task {
        var event = ServerSentEvent()
        var data: [String] = []
        do {
          for try await line in lines {
            if line.isEmpty {
              if !data.isEmpty {
                event.data = data.joined(separator: "\n")
                continuation.yield(event)
              }
              event = ServerSentEvent(id: event.id)
              data = []
              continue
            }
            if line.hasPrefix(":") { continue }
            let field = line.prefix { $0 != ":" }
            var value = line.dropFirst(field.count)
            if value.hasPrefix(":") { value = value.dropFirst() }
            if value.hasPrefix(" ") { value = value.dropFirst() }
            switch field {
            case "event": event.event = String(value)
            case "data": data.append(String(value))
            case "id": event.id = String(value)
            case "retry": event.retry = Int(value)
            default: break
            }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in reading.cancel() }
    }
  }
}

/// One server-sent event.
public struct ServerSentEvent: Sendable, Equatable {
  /// Its type, `message` when it names none.
  public var event = "message"
  /// Its data, its lines joined by newlines.
  public var data = ""
  /// The last event id seen, which a reconnection sends as `Last-Event-ID`.
  public var id: String?
  /// The reconnection time it asks for, in milliseconds.
  public var retry: Int?

  /// An event of these values.
  public init(event: String = "message", data: String = "", id: String? = nil, retry: Int? = nil) {
    self.event = event
    self.data = data
    self.id = id
    self.retry = retry
  }
}

/// A streamed answer: its status and header fields now, its body as it arrives.
public struct StreamedResponse: Sendable {
  /// Its status and header fields.
  public let head: HTTPResponse
  /// Its body, as it arrives.
  public let body: ResponseStream

  /// A streamed answer of `head` and `body`.
  public init(head: HTTPResponse, body: ResponseStream) {
    self.head = head
    self.body = body
  }

  /// Its status.
  public var status: Int { head.status.code }
  /// Its header fields.
  public var headerFields: HTTPFields { head.headerFields }
}
