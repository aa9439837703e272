import Api
import Domain

/// What a layered service's calls reach under its layers: the service a stack's source makes,
/// made for each call with the validators a caching layer offers that call (down, as a value),
/// whose answer comes back with its own validators (up, as a value: a `Validated`, such as
/// Api's `Response`). No other call, and no token refresh, sees them.
///
/// ```swift
/// LayeredBookService(base: .plain(bookSource), layers: stack)  // a fake, or no api at all
/// ```
public struct Source<Service: Sendable>: Sendable {
  let make: @Sendable (_ offered: CacheValidators?) -> Service

  /// A source that makes each call's service with the validators it is offered (Kernel's
  /// `api` source gives it a client that sends them; see `ApiClient.offering(_:)`).
  public init(offering make: @escaping @Sendable (_ offered: CacheValidators?) -> Service) {
    self.make = make
  }

  /// A service that makes no conditional requests: offered validators are not sent.
  public static func plain(_ service: Service) -> Source {
    Source { _ in service }
  }
}

extension Source {
  /// The service `make` builds over `client`, made anew for each call over a client that
  /// offers that call alone the validators a caching layer offered (`ApiClient.offering(_:)`);
  /// the validators of its answer come back in its `Response`. What a stack's `api` source is
  /// under layers, and what an app registering its own layered service by hand passes as its
  /// base.
  public static func api(
    _ client: ApiClient, _ make: @escaping @Sendable (ApiClient) -> Service
  ) -> Source {
    Source(offering: { make(client.offering($0)) })
  }
}
