import Domain
import Foundation

/// One write (a rating, a comment, a new issue), described once: what it sends, the key that
/// makes a repeat harmless, the order it keeps, what it changes in the cache and what it
/// answers. A `Writer` sends it at once, or keeps it in the outbox to send later: the same
/// bytes with the same idempotency key on every try.
///
/// ```swift
/// let write = try WriteCall<Loan>(
///   "borrow", route: .post("books/7/loans", body: .json(Borrow())), summary: "a loan of book 7",
///   ordering: "books/7", invalidates: ["books/7"])
/// switch try await writer.write(write) {
/// case .sent(let loan): show(loan)
/// case .queued(let pending): say("queued: \(pending.summary)")
/// case .applied(let problem): say("done, but its answer could not be read: \(problem)")
/// }
/// ```
public struct WriteCall<Value: Sendable>: Sendable {
  /// The write, e.g. `rateMovie`, for logs and `outbox list`.
  public let name: String
  /// What a person calls it: `a rating of movie 7`.
  public let summary: String
  /// What its sender sends, as the sender reads it back (Kernel's api sender: a recorded
  /// `Route`). Opaque to the layers and the outbox, which keep it as it is.
  public let request: Data
  /// Made once, when the write is made, and sent as `Idempotency-Key` on every try, so a server
  /// that honours it applies a repeated write once.
  public let idempotencyKey: String
  /// Writes with the same ordering key are sent in the order they were made (`movies/7`).
  public let orderingKey: String
  /// The keys of the calls whose cached answers it changes (`ServiceCall.key`): dropped when
  /// it is sent, so the next read asks the api.
  public let invalidates: [String]
  /// How its answer's body becomes its value.
  public let decode: @Sendable (Data) throws -> Value
  /// How it changes cached answers while it waits in the outbox: the copies an app shows,
  /// marked pending, until the api's answer replaces them.
  public var optimistic: [OptimisticEdit]

  public init(
    name: String, summary: String, request: Data, idempotencyKey: String = UUID().uuidString,
    orderingKey: String, invalidates: [String] = [], optimistic: [OptimisticEdit] = [],
    decode: @escaping @Sendable (Data) throws -> Value
  ) {
    self.name = name
    self.summary = summary
    self.request = request
    self.idempotencyKey = idempotencyKey
    self.orderingKey = orderingKey
    self.invalidates = invalidates
    self.optimistic = optimistic
    self.decode = decode
  }
}

/// How a write changes one cached answer before it is sent: the answer of `call`, changed.
public struct OptimisticEdit: Sendable {
  /// The cached call's key (`ServiceCall.key`).
  public let key: String
  let apply: @Sendable (Data) throws -> Data

  /// The cached answer of `call`, with `change` made to it; nothing when none is cached.
  public static func update<Read: Sendable>(
    _ call: ServiceCall<Read>, _ change: @escaping @Sendable (inout Read) -> Void
  ) -> OptimisticEdit {
    OptimisticEdit(key: call.key) { data in
      guard let codec = call.codec else { return data }
      var value = try codec.decode(data)
      change(&value)
      return try codec.encode(value)
    }
  }
}

/// What a write answered: the api's value, or a place in the outbox.
public enum Written<Value: Sendable>: Sendable {
  /// The api took it and answered this.
  case sent(Value)
  /// It could not be sent now and waits in the outbox, kept on disk, to be sent by a sync.
  case queued(PendingWrite)
  /// The api took it (a 2xx) but its answer does not fit the call's type: the write is done,
  /// and must not be made again (a new one would be applied twice); `problem` says what did
  /// not fit.
  case applied(problem: String)

  /// The api's answer, or nil while it waits.
  public var value: Value? {
    if case .sent(let value) = self { return value }
    return nil
  }
}

/// A write kept in the outbox: what it sends, where, and how its tries went.
public struct PendingWrite: Sendable, Hashable, Codable {
  /// Its place in the outbox: writes are sent in the order of their ids, per ordering key.
  public var id: Int64
  public var name: String
  public var summary: String
  /// The api origin it goes to (`http://127.0.0.1:8080`): a sync sends only the writes of the
  /// environment it talks to.
  public var origin: String
  /// The cache partition whose answers it changes (see `CachingLayer.partition`).
  public var partition: String
  public var orderingKey: String
  public var idempotencyKey: String
  public var request: Data
  public var invalidates: [String]
  public var state: WriteState
  /// How many times a sync sent it.
  public var tries: Int
  /// The last try's failure, in a sentence.
  public var lastError: String?
  /// The server's body of a conflict (its current version), for the app to resolve it.
  public var serverBody: Data?
  public var createdAt: Date
  /// Not sent by an automatic sync before then (backoff after a failed try).
  public var nextTryAt: Date

  public init(
    id: Int64 = 0, name: String, summary: String, origin: String, partition: String,
    orderingKey: String, idempotencyKey: String, request: Data, invalidates: [String],
    state: WriteState = .pending, tries: Int = 0, lastError: String? = nil,
    serverBody: Data? = nil, createdAt: Date, nextTryAt: Date
  ) {
    self.id = id
    self.name = name
    self.summary = summary
    self.origin = origin
    self.partition = partition
    self.orderingKey = orderingKey
    self.idempotencyKey = idempotencyKey
    self.request = request
    self.invalidates = invalidates
    self.state = state
    self.tries = tries
    self.lastError = lastError
    self.serverBody = serverBody
    self.createdAt = createdAt
    self.nextTryAt = nextTryAt
  }
}

/// Where a kept write stands. A sent write leaves the outbox.
public enum WriteState: String, Sendable, Hashable, Codable, CaseIterable {
  /// Waiting to be sent (again).
  case pending
  /// The api said it conflicts with what it holds now (409, or 412): kept with the server's
  /// body until the app retries it or drops it; later writes of its ordering key wait.
  case conflict
  /// The api refused it (another 4xx): kept, with the api's message, for the user to see.
  case rejected
  /// Its row cannot be read by this build (another program changed it): never sent, kept for
  /// the user to see and drop; `lastError` says what is wrong with it.
  case damaged
}
