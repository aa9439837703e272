import Api
import Composition
import Domain
import Foundation
import Injection
import KernelTesting
import KernelTestingComposition
import Layers
import MoviesKit
import MoviesTesting
import SampleApi
import Store
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(1))) struct KernelCompositionTests {
  private let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
    "kernel-composition-\(UUID().uuidString)")

  private func runtime(environment: String? = nil, baseURL: String? = nil) -> Runtime {
    Runtime(dataDirectory: folder, environment: environment, baseURL: baseURL)
  }

  @Test func theLayeredProfileAnswersFromTheSampleApiThenTheOfflineProfileFromTheCache()
    async throws
  {
    defer { try? FileManager.default.removeItem(at: folder) }
    let layered = try KernelApp.kernel.compose(config: try .builtIn(.kernel), runtime: runtime())
      .container
    let online = try await layered.stack("movies").answer(.topGrossingMovies(year: 2016))
    #expect(online.value.count == 10)
    #expect(online.origin == .network)

    let offline = try KernelApp.kernel.compose(
      config: try .builtIn(.kernel), profile: "offline", runtime: runtime()
    ).container
    let cached = try await offline.stack("movies").answer(.topGrossingMovies(year: 2016))
    #expect(cached.value == online.value)
    #expect(cached.origin == .cache)
  }

  @Test func cacheAgesAreMeasuredOnTheContainersWallClock() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let wall = TestWallClock()
    func profile(_ name: String) throws -> Container {
      try composedContainer(app: .kernel, profile: name, dataDirectory: folder) { child in
        try child.register(WallClock.self, scope: .singleton) { _ in wall.wallClock }
      }
    }
    _ = try await profile("layered").stack("movies").answer(.movie(id: 1))
    wall.advance(90)
    let movie = try await profile("offline").stack("movies").answer(.movie(id: 1))
    #expect(movie.value.id == 1)
    #expect(movie.origin == .cache && movie.age == 90)
  }

  @Test func theOfflineProfileBuildsNoTransportAtAll() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let offline = try KernelApp.kernel.compose(
      config: try .builtIn(.kernel), profile: "offline", runtime: runtime()
    ).container
    let services = offline.registrations.map(\.service)
    #expect(!services.contains("Transport"))
    #expect(!services.contains("ApiClient"))
    #expect(!services.contains("AuthService"))
    #expect(services.contains("ServiceStack tagged \"movies\""))
    #expect(!offline.graph.rendered(as: .text).contains("Transport"))
  }

  /// `auth logout` and `env use` drop what the session built (the transport chosen for the
  /// environment, the client holding the token, the auth service): the next use builds anew,
  /// for the new environment; the context, the config and the clock are kept.
  @Test func logoutAndUseDropWhatTheSessionBuilt() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let access = try KernelApp.kernel.compose(config: try .builtIn(.kernel), runtime: runtime())
      .api()
    let client = try access.service(ApiClient.self)
    let context = try access.service((any ApiContext).self)
    #expect(try access.service(ApiClient.self) === client)
    try access.logout()
    let afterLogout = try access.service(ApiClient.self)
    #expect(afterLogout !== client)
    #expect(try access.service((any ApiContext).self) as AnyObject === context as AnyObject)
    #expect(try access.use("local"))
    #expect(try access.service(ApiClient.self) !== afterLogout)
    #expect(try access.current.name == "local")
    // A name the config does not have changes nothing.
    let kept = try access.service(ApiClient.self)
    #expect(try access.use("staging") == false)
    #expect(try access.service(ApiClient.self) === kept)
  }

  /// An app that stays running ends the session on a profile's graph too, and code it runs
  /// inside the profile resolves `@Injected` from that graph.
  @Test func aProfileEndsItsSessionAndIsCurrentForTheCodeItRuns() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let profile = try KernelApp.kernel.compose(config: try .builtIn(.kernel), runtime: runtime())
    let client = try profile.service(ApiClient.self)
    #expect(try profile.service(ApiClient.self) === client)
    profile.endSession()
    #expect(try profile.service(ApiClient.self) !== client)
    let configured = try profile.service(KernelConfig.self)
    let injected = await profile.makeCurrent {
      struct Reader { @Injected var config: KernelConfig? }
      return Reader().config
    }
    #expect(injected?.file == configured.file)
  }

  @Test func theLayeredStackIsOneServiceOverItsSource() throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let layered = try KernelApp.kernel.compose(config: try .builtIn(.kernel), runtime: runtime())
      .container
    let movies = try #require(
      layered.registrations.first { $0.service == "ServiceStack tagged \"movies\"" })
    // [logging, dedupe, cache(networkFirst)] over the api source: one stack, applied once per
    // call, made with the service; nothing decorates it.
    #expect(movies.decorators == 0)
    let graph = layered.graph.rendered(as: .text)
    #expect(graph.contains("ServiceStack tagged \"movies\" [session]"))
    #expect(graph.contains("CacheStore"))
    #expect(graph.contains("Transport"))
  }

  @Test func theApiProfileReachesALocalServerThroughTheOverrides() async throws {
    defer { try? FileManager.default.removeItem(at: folder) }
    let server = try await FixtureServer.start(routes: .sampleMovies())
    let api = try KernelApp.kernel.compose(
      config: try .builtIn(.kernel), profile: "api",
      runtime: runtime(environment: "local", baseURL: server.baseURL.absoluteString)
    ).container
    let movies = try await api.stack("movies").answer(.topRatedMovies(year: 2016))
    await server.stop()
    #expect(movies.value.first?.name == "Zootopia")
    // A stack without layers: the api's answers, and it says so.
    #expect(movies.origin == .network)
    #expect(server.responder.requests(to: "movies/topRated/2016") == 1)
  }

  @Test func aTestOverridesTheTransportClockAndJitterInAChildOfTheRealComposition()
    async throws
  {
    defer { try? FileManager.default.removeItem(at: folder) }
    let clock = TestClock(immediate: true)
    let transport = RecordingTransport { _, _ in ApiResponse(status: 503) }
    let test = try composedContainer(app: .kernel, profile: "api", dataDirectory: folder) { child in
      try child.register((any Transport).self, scope: .singleton) { _ in transport }
      try child.register((any Clock<Duration>).self, scope: .singleton) { _ in clock }
      try child.register(RandomSource.self, scope: .singleton) { _ in .fixed(0) }
    }
    await #expect(throws: ApiError.self) {
      try await test.stack("movies").answer(.movie(id: 1))
    }
    // The first try and the configured two retries, after the backoff waits the container's
    // clock was asked for: 200 ms and 400 ms at the lowest jitter (0.5).
    #expect(transport.requests.all.count == 3)
    #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200)])
    // The real composition is untouched by its child's overrides.
    let real = try KernelApp.kernel.compose(
      config: try .builtIn(.kernel), profile: "api", runtime: runtime()
    ).container
    #expect(try await real.stack("movies").answer(.movie(id: 1)).value.name == "Finding Dory")
  }

  @Test(arguments: [
    (
      "profile", "nightly",
      "the built-in config: profile names \"nightly\", which is not one of: api, layered, offline."
    )
  ])
  func anUnknownProfileListsTheValidOnes(key: String, name: String, message: String) throws {
    let error = #expect(throws: ConfigError.self) {
      try KernelApp.kernel.compose(config: try .builtIn(.kernel), profile: name, runtime: runtime())
    }
    #expect(error?.description == message)
    #expect(error.map { ServiceFailure.of($0) } == .configuration)
  }

  @Test func configErrorsNameTheKeyAndWhatIsValid() throws {
    func failure(
      _ change: (inout KernelConfig) -> Void, profile: String? = nil, runtime: Runtime? = nil
    ) -> String {
      guard var config = try? KernelConfig.builtIn(.kernel) else {
        return "the built-in config fails"
      }
      config.file = "Config/kernel.yaml"
      change(&config)
      do {
        _ = try KernelApp.kernel.compose(
          config: config, profile: profile, runtime: runtime ?? self.runtime())
        return "no error"
      } catch {
        return "\(error)"
      }
    }
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["logging", "cache(networkFirst)"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: the stack profiles.layered.movies [logging, cache(networkFirst)] must end in a source, api or store."
    )
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["store", "api"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: profiles.layered.movies[0] is \"store\", but it must be a layer: only the stack's last entry is its source (api or store)."
    )
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["logging", "cahce", "api"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: profiles.layered.movies[1] names \"cahce\", which is not one of: api, store, cache(<policy>), dedupe, logging, memory(<capacity>, <seconds>), outbox; did you mean cache?"
    )
    let unknownPolicy = failure {
      $0.profiles["layered"]?.stacks["movies"] = .init(
        ["cache(sometimes)", "api"], key: "profiles.layered.movies")
    }
    #expect(
      unknownPolicy.contains(
        "profiles.layered.movies[0] names \"sometimes\", which is not one of: cacheOnly, networkOnly"
      ))
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["cache(cacheFirst, soon)", "api"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: profiles.layered.movies[0] is \"cache(cacheFirst, soon)\", but it must be a whole number above 0 for maxAge."
    )
    #expect(
      failure { $0.retriers = ["backoff", "retryForever"] }
        == "Config/kernel.yaml: retriers[1] names \"retryForever\", which is not one of: backoff."
    )
    #expect(
      failure({ _ in }, runtime: runtime(environment: "staging"))
        == "Config/kernel.yaml: environment names \"staging\", which is not one of: local, production, sample."
    )
    // A misspelt label is refused, naming the closest one the part takes.
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["cache(networkFirst, maxAg: 5)", "api"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: profiles.layered.movies[0] cache(networkFirst, maxAg: 5) has no label maxAg; did you mean maxAge?"
    )
    #expect(
      failure {
        $0.profiles["layered"]?.stacks["movies"] = .init(
          ["memory(capacty: 5)", "api"], key: "profiles.layered.movies")
      }
        == "Config/kernel.yaml: profiles.layered.movies[0] memory(capacty: 5) has no label capacty; did you mean capacity?"
    )
    #expect(
      failure { $0.adapters = ["defaultHeaders(agent: x)"] }
        == "Config/kernel.yaml: adapters[0] defaultHeaders(agent: x) has no label agent; it takes none."
    )
    let insecure = failure(
      { _ in }, runtime: runtime(environment: "local", baseURL: "http://10.1.2.3/api/"))
    #expect(
      insecure.hasPrefix(
        "Config/kernel.yaml: environments.local.baseURL is not usable: it is plain http to a host"
          + " that is not loopback (http://10.1.2.3/api/); use https, or set"
          + " environments.local.insecure: true"
      ))
  }
}
