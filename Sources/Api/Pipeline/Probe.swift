extension ApiClient {
  /// Whether the api can be reached now, as `doctor` asks: one GET of the environment's base URL
  /// itself, straight through the transport (no adapters, credential, retries or redirects). Any
  /// status is an answer (a 404 for the base URL is one) and is returned; when nothing answered,
  /// the `ApiError` that says why (`unreachable`, `timedOut`).
  public func probe() async throws -> Int {
    let route = Route.get("")
    do {
      return try await transport.send(route.request(in: context.environment), body: nil).status
    } catch let error as TransportError {
      throw Self.apiError(.failure(error), route: route)
    }
  }
}
