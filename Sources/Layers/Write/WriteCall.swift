import Api
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
  /// The write, e.g. `borrowBook`, for logs and `outbox list`.
  public let name: String
  /// What a person calls it: `a loan of book 7`.
  public let summary: String
  /// What its sender sends, as the sender reads it back (Kernel's api sender: a recorded
  /// `Route`). Opaque to the layers and the outbox, which keep it as it is.
  public let request: Data
  /// Made once, when the write is made, and sent as `Idempotency-Key` on every try, so a server
  /// that honours it applies a repeated write once.
  public let idempotencyKey: String
  /// Writes with the same ordering key are sent in the order they were made (`books/7`).
  public let orderingKey: String
  /// The keys of the calls whose cached answers it changes (`ServiceCall.key`): dropped when
  /// it is sent, so the next read asks the api.
  public let invalidates: [String]
  /// How the api's answer (its body, or the whole of it: status and header fields too) becomes
  /// its value.
  public let decode: @Sendable (ApiResponse) throws -> Value
  /// How it changes cached answers while it waits in the outbox: the copies an app shows,
  /// marked pending, until the api's answer replaces them.
  public var optimistic: [OptimisticEdit]
  /// The key of the stored entity the write edits (`ServiceCall.book(id: 7).key`): the ETag of
  /// that copy, as its own item answer gave it, is taken when the write is made and sent as
  /// `If-Match` on every try, so the api refuses it (412) if the entity changed meanwhile. No
  /// app copies ETags into its model. Nil: the write is sent unconditionally.
  public var precondition: String?

  /// A write of these parts; `decode` turns the api's answer into its value.
  public init(
    name: String, summary: String, request: Data, idempotencyKey: String = UUID().uuidString,
    orderingKey: String, invalidates: [String] = [], optimistic: [OptimisticEdit] = [],
    decode: @escaping @Sendable (ApiResponse) throws -> Value
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
