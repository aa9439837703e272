import Api
import Layers

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
