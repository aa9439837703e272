import Foundation

/// One try at sending a route: what adapters and retriers know about the request in hand.
public struct Attempt: Sendable {
  /// The route being sent.
  public let route: Route
  /// The client sending it: its context holds the environment and token, and a retrier may
  /// send through it.
  public let client: ApiClient
  /// 1 for the first try, 2 for the first retry, and so on.
  public let number: Int
  /// How many retries each retrier decided so far, by its `name`.
  public let retriesBy: [String: Int]

  /// The client's context.
  public var context: any ApiContext { client.context }

  init(route: Route, client: ApiClient) {
    self.init(route: route, client: client, number: 1, retriesBy: [:])
  }

  private init(route: Route, client: ApiClient, number: Int, retriesBy: [String: Int]) {
    self.route = route
    self.client = client
    self.number = number
    self.retriesBy = retriesBy
  }

  /// The next try, after a retry `retrier` decided.
  func next(decidedBy retrier: String) -> Attempt {
    var counts = retriesBy
    counts[retrier, default: 0] += 1
    return Attempt(route: route, client: client, number: number + 1, retriesBy: counts)
  }
}

/// How a try ended, when it did not succeed.
public enum AttemptOutcome: Sendable {
  /// The server answered with a status outside 2xx.
  case response(ApiResponse)
  /// The transport failed (no connection, timeout, refused redirect).
  case failure(TransportError)

  /// The answer's status; nil for a transport failure.
  public var status: Int? {
    if case .response(let response) = self { return response.status }
    return nil
  }
}
