extension ApiClient {
  /// Whether the api can be reached now, as `doctor` asks: one GET of the environment's base URL
  /// itself, straight through the transport (no adapters, credential, retries or redirects),
  /// given at most `limit` on the `deadlineClock` (a host that drops packets is not waited on
  /// for the transport's own timeouts). Any status is an answer (a 404 for the base URL is one)
  /// and is returned; when nothing answered, the `ApiError` that says why (`unreachable`,
  /// `timedOut`).
  public func probe(within limit: Duration = .seconds(5)) async throws -> Int {
    let route = Route.get("")
    let environment = context.environment
    let request = route.request(in: environment)
    return try await withThrowingTaskGroup(of: Int?.self) { group in
      group.addTask { [transport] in
        do {
          return try await transport.send(request, body: nil).status
        } catch let error as TransportError {
          throw Self.apiError(.failure(error), route: route)
        }
      }
      group.addTask { [deadlineClock] in
        try await deadlineClock.sleep(for: limit)
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let status = first else {
        throw ApiError.timedOut(route: route, host: environment.origin.host)
      }
      return status
    }
  }
}
