import Domain
import Foundation

/// How a write (`ServiceCall.writing(ordering:invalidates:optimistic:precondition:)`) changes one
/// stored answer while it waits in the outbox: the answer of `call`, changed.
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
