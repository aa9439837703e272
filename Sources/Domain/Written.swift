import Foundation

/// What a write answered: the api's value, or a place in the outbox.
public enum Written<Value: Sendable>: Sendable {
  /// The api took it and answered this.
  case sent(Value)
  /// It could not be sent now and waits in the outbox, kept on disk, to be sent by a sync.
  case queued(PendingWrite)
  /// The api took it (a 2xx) but its answer does not fit the call's type: the write is done,
  /// and must not be made again (a new one would be applied twice); `problem` says what did
  /// not fit, as a clause with no full stop.
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
  /// The write's name, as its service calls it (`rate`).
  public var name: String
  /// What a person calls it (`a rating of book 3`).
  public var summary: String
  /// The api origin it goes to (`http://127.0.0.1:8080`): a sync sends only the writes of the
  /// environment it talks to.
  public var origin: String
  /// The cache partition whose answers it changes (see `CachingLayer.partition`).
  public var partition: String
  /// Writes of one key are sent in the order they were made; a later one waits for an earlier one's
  /// end.
  public var orderingKey: String
  /// The `Idempotency-Key` it is sent with, every time: the api applies it once however often it
  /// arrives.
  public var idempotencyKey: String
  /// The request, encoded: what a sync sends.
  public var request: Data
  /// The cache keys whose answers it changes, refreshed once it is applied.
  public var invalidates: [String]
  /// Where it is: pending, conflict, rejected, damaged.
  public var state: WriteState
  /// How many times a sync sent it.
  public var tries: Int
  /// The last try's failure, in a sentence.
  public var lastError: String?
  /// The server's body of a conflict (its current version), for the app to resolve it.
  public var serverBody: Data?
  /// When it was made.
  public var createdAt: Date
  /// Not sent by an automatic sync before then (backoff after a failed try).
  public var nextTryAt: Date
  /// The `If-Match` it is sent with: the ETag of the stored copy it edits, taken when it was
  /// made.
  public var ifMatch: String?
  /// The ETag of the server's version a conflict answered with: what resending it against
  /// that version sends as `If-Match`.
  public var serverETag: String?
  /// What its optimistic edits changed, by the key of the stored copy each edited (a JSON Merge
  /// Patch: `JSONValue.mergePatch`): undoing another write of the same copy makes these again
  /// of the api's copy, so the copy shows what the writes still kept make of it.
  public var edits: [String: JSONValue]

  /// A write to keep; `id` is given by the outbox that keeps it.
  public init(
    id: Int64 = 0, name: String, summary: String, origin: String, partition: String,
    orderingKey: String, idempotencyKey: String, request: Data, invalidates: [String],
    state: WriteState = .pending, tries: Int = 0, lastError: String? = nil,
    serverBody: Data? = nil, createdAt: Date, nextTryAt: Date, ifMatch: String? = nil,
    serverETag: String? = nil, edits: [String: JSONValue] = [:]
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
    self.ifMatch = ifMatch
    self.serverETag = serverETag
    self.edits = edits
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
