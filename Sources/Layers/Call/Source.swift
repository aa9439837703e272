import Domain

/// What a layered service's calls reach under its layers: the service a stack's source makes,
/// made for each call, so a caching layer can offer that one call its stored copy's validators
/// and hear those of the answer, as values; no other call, and no token refresh, sees them.
///
/// ```swift
/// LayeredBookService(base: .plain(bookService), layers: stack)  // a fake, or no api at all
/// ```
public struct Source<Service: Sendable>: Sendable {
  /// The service for one call, and how to read the validators of the answer it got.
  public typealias Made = (service: Service, received: @Sendable () -> CacheValidators?)

  let make: @Sendable (_ offered: CacheValidators?) -> Made

  /// A source that makes each call's service with the validators it is offered (Kernel's
  /// `api` source gives it a client that sends them; see `ApiClient.offering(_:)`).
  public init(conditional make: @escaping @Sendable (_ offered: CacheValidators?) -> Made) {
    self.make = make
  }

  /// A service that makes no conditional requests: offered validators are not sent, and its
  /// answers bring none.
  public static func plain(_ service: Service) -> Source {
    Source { _ in (service, { nil }) }
  }
}
