import Api
import Composition
import Domain
import Foundation
import Injection
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

// A second domain (TV shows) registered by hand beside the movies in a composed container: the
// lower-level path under the catalog (README "Use Kernel in your app" shows the catalog's).

// 1. The domain: a value and a protocol.
struct Show: Codable, Sendable, Equatable {
  let id: Int
  let title: String
}

protocol ShowService: Sendable {
  func show(id: Int) async throws -> Answer<Show>
}

// 2. The call, declared once: its route below the environment's base URL, decoded by the
//    shared client (adapters, token refresh, backoff, errors that name the route all come with
//    it), kept whole by a cache above.
extension ServiceCall where Value == Show {
  static func show(id: Int) -> Self { ServiceCall(.init(.get("shows/\(id)"))) }
}

// 3. The small struct over a stack, for an app that wants a service type: the layers are the
//    movies' own. With no client it is the store alone: nothing that sends.
struct StackShowService: ShowService {
  let stack: ServiceStack
  func show(id: Int) async throws -> Answer<Show> { try await stack.answer(.show(id: id)) }
}

// 4. The wiring: register it beside the movies in the profile's container. It holds the api
//    client, so it lives as long as the session (validation refuses a singleton over it).
func registerShows(in container: Container, policy: CachePolicy) throws {
  try container.register((any ShowService).self, scope: .session) { r in
    StackShowService(
      stack: ServiceStack(
        client: try r.resolve(), layers: [CachingLayer(store: try r.resolve(), policy: policy)]))
  }
}

@Suite(.timeLimit(.minutes(1))) struct AddYourOwnServiceTests {
  @Test func showsGetTheApiTheCacheAndAnOfflineAnswer() async throws {
    let server = try await FixtureServer.start(routes: .sampleMovies())
    server.handle("GET", "/api/shows/7") { _ in
      SampleResponse(status: 200, body: Data(#"{"id": 7, "title": "Twin Peaks"}"#.utf8))
    }
    let data = FileManager.default.temporaryDirectory.appendingPathComponent(
      "kernel-shows-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: data) }
    let runtime = Runtime(
      dataDirectory: data, environment: "local", baseURL: server.baseURL.absoluteString)
    // 5. In the app: the profile's container, with the shows beside the movies.
    let container = try KernelApp.kernel.compose(
      config: try KernelConfig.builtIn(.kernel, profile: "layered"), runtime: runtime
    ) { try registerShows(in: $0, policy: .networkFirst) }.container
    let shows = try container.resolve((any ShowService).self)

    #expect(try await shows.show(id: 7).value == Show(id: 7, title: "Twin Peaks"))
    await server.stop()
    // The server is gone: the same call answers from the cache, and says so.
    let cached = try await shows.show(id: 7)
    #expect(cached.value.title == "Twin Peaks" && cached.origin == .cache)
    // Offline: the offline profile's container, which holds no api client at all; the shows
    // from the call description and the cache alone.
    let offlineContainer = try KernelApp.kernel.compose(
      config: try KernelConfig.builtIn(.kernel, profile: "offline"), runtime: runtime
    ) { child in
      try child.register((any ShowService).self, scope: .singleton) { r in
        StackShowService(
          stack: ServiceStack(
            client: nil, layers: [CachingLayer(store: try r.resolve(), policy: .cacheOnly)]))
      }
    }.container
    #expect(throws: (any Error).self) { try offlineContainer.resolve(ApiClient.self) }
    let offline = try offlineContainer.resolve((any ShowService).self)
    #expect(try await offline.show(id: 7).value.id == 7)
    await #expect(throws: LayerError.miss(what: "GET shows/8")) { try await offline.show(id: 8) }
  }

  @Test func aRouteOfYourOwnCannotLeaveTheEnvironmentsHost() throws {
    let environment = try ApiEnvironment(
      name: "local", baseURL: #require(URL(string: "http://127.0.0.1:8080/api/")))
    for path in ["//evil.example/x", "https://evil.example/x", "http://127.0.0.1:9/x"] {
      let url = Route.get(path).url(in: environment)
      #expect(url.host == "127.0.0.1" && url.port == 8080, "\(path) → \(url)")
      #expect(url.path.hasPrefix("/api/"), "\(path) → \(url)")
    }
    #expect(
      Route.get("/shows/7").url(in: environment).absoluteString
        == "http://127.0.0.1:8080/api/shows/7")
  }
}
