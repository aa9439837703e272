import Api
import KernelTesting
import SampleApi

extension ApiClient {
  /// A client of `server`, a loopback fixture, with no retries, so a test sees each failure as
  /// it happens.
  static func loopback(_ server: FixtureServer) throws -> ApiClient {
    ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: server.baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), retriers: [])
  }
}
