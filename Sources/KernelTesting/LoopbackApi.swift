import Api
import Domain
import Foundation
import Layers
import SampleApi

/// A fixture server on a loopback port and an `ApiClient` pointed at it: an api test's whole
/// setup in one value. The server answers `routes` (an app's sample api, or routes the test
/// writes); its faults (latency, 503s, required and expiring tokens) come from `options`; its
/// latency and token lifetimes run on `options.clock`.
public struct LoopbackApi: Sendable {
  /// How the client reaches the server.
  public enum Route: String, CaseIterable, Sendable {
    /// Over real loopback HTTP, through the platform's transport (`CurlTransport` on Linux,
    /// `URLSessionTransport` on Apple platforms).
    case http
    /// In process, through the server's responder: no socket, same answers.
    case inProcess
  }

  /// The server, on a loopback port.
  public let server: FixtureServer
  /// The client's context: its environment and kept token.
  public let context: InMemoryApiContext
  /// The client, with the adapters, authentication and retriers asked for.
  public let client: ApiClient

  /// Starts a server and a client. `clock` is the client's (retry delays), `deadlineClock` the
  /// transport's (the whole-request deadline), `options.clock` the server's (latency, tokens).
  public static func start(
    _ route: Route = .http, routes: FixtureRoutes, options: SampleApiResponder.Options = .init(),
    transport configuration: PlatformTransport.Configuration = .loopbackTests,
    adapters: [any RequestAdapter] = [.defaultHeaders],
    authentication: AuthenticationInterceptor? = .plainToken(),
    retriers: [any RequestRetrier] = [], clock: any Clock<Duration> = ContinuousClock(),
    deadlineClock: any Clock<Duration> = ContinuousClock()
  ) async throws -> LoopbackApi {
    let server = try await FixtureServer.start(options: options, routes: routes)
    let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
    let context = InMemoryApiContext(environment: environment)
    let transport: any Transport =
      switch route {
      case .http: PlatformTransport(configuration: configuration, clock: deadlineClock)
      case .inProcess: InProcessTransport.sample(server.responder)
      }
    let client = ApiClient(
      context: context, transport: transport, adapters: adapters,
      authentication: authentication, retriers: retriers, clock: clock)
    return LoopbackApi(server: server, context: context, client: client)
  }

  /// The server's counters and options.
  public var responder: SampleApiResponder { server.responder }
}

/// Runs `body` with a started `LoopbackApi` and stops its server afterwards, whatever happens.
public func withLoopbackApi<R>(
  _ route: LoopbackApi.Route = .http, routes: FixtureRoutes,
  options: SampleApiResponder.Options = .init(),
  transport: PlatformTransport.Configuration = .loopbackTests,
  adapters: [any RequestAdapter] = [.defaultHeaders],
  authentication: AuthenticationInterceptor? = .plainToken(),
  retriers: [any RequestRetrier] = [], clock: any Clock<Duration> = ContinuousClock(),
  deadlineClock: any Clock<Duration> = ContinuousClock(),
  _ body: (LoopbackApi) async throws -> R
) async throws -> R {
  let api = try await LoopbackApi.start(
    route, routes: routes, options: options, transport: transport, adapters: adapters,
    authentication: authentication, retriers: retriers, clock: clock,
    deadlineClock: deadlineClock)
  do {
    let result = try await body(api)
    await api.server.stop()
    return result
  } catch {
    await api.server.stop()
    throw error
  }
}

/// Runs `body` with a fixture server of its own, answering `routes`, and stops it afterwards,
/// whatever happens.
public func withFixtureServer<R>(
  routes: FixtureRoutes, options: SampleApiResponder.Options = .init(),
  _ body: (FixtureServer) async throws -> R
) async throws -> R {
  let server = try await FixtureServer.start(options: options, routes: routes)
  do {
    let result = try await body(server)
    await server.stop()
    return result
  } catch {
    await server.stop()
    throw error
  }
}

/// The base URL of a server that is not there: every connection to it is refused, and no other
/// server can take its port while the process runs (`RefusingPort`).
public func urlOfStoppedServer() throws -> URL {
  try RefusingPort.url()
}
