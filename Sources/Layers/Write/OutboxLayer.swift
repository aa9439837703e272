import Domain

/// The outbox as a layer of a service's stack, so its reads and writes are configured in one
/// place (`movies: [logging, "cache(networkFirst)", outbox, api]`): reads pass through it (a
/// kept write's edit already shows in the store below), and the stack's writes
/// (`ServiceStack.write(_:)`) are kept in its outbox when the api cannot take them — or always,
/// on a stack with no api (`[outbox, store]`: the offline profile). A stack without it sends each
/// write or fails.
package struct OutboxLayer: ServiceLayer {
  /// Where writes are kept.
  public let outbox: Outbox
  /// The origin of the environment in use, which its kept writes are sent to.
  public let origin: String
  /// The cache partition its writes' edits and invalidations apply in.
  public let partition: String
  let warn: @Sendable (String) -> Void

  /// Keeps writes in `outbox` for `origin`, in `partition`; `warn` hears what a write could not
  /// do beside its answer (an edit that could not be shown).
  public init(
    outbox: Outbox, origin: String, partition: String,
    warn: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    self.outbox = outbox
    self.origin = origin
    self.partition = partition
    self.warn = warn
  }

  /// A read goes on down: the outbox answers writes only.
  public func run<Value: Sendable>(_ call: ServiceCall<Value>, next: Next<Value>) async throws
    -> Answer<Value>
  {
    try await next()
  }
}
