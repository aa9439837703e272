import Api
import Composition
import Layers
import SampleApi

/// The bundled example: the `movies` service (its calls in MovieCalls.swift; sources `api` and
/// `store`, every layer and the outbox), and the `sample` transport that answers the bundled
/// movie API in process. Registered exactly as an app registers its own service.
public struct MoviesAssembly: Assembly {
  /// The movie example's parts.
  public init() {}

  /// Registers `movies` (its reads, writes and changes feed) and the `sample` transport.
  public func assemble(into catalog: inout Catalog) {
    catalog.feed(.movies, of: "movies")
    catalog.transport("sample", answersInProcess: true) { _ in
      InProcessTransport.sample(SampleApiResponder(routes: .sampleMovies()))
    }
  }
}

extension KernelApp {
  /// The `kernel` command's app: Kernel's parts and the movie example, with `Config/kernel.yaml`
  /// built in; registered through the same calls as any app's.
  public static let kernel: KernelApp = {
    var app = KernelApp(
      name: "kernel", variablePrefix: "KERNEL", userAgent: DefaultHeadersAdapter.userAgent,
      builtInConfig: (BuiltInConfig.name, BuiltInConfig.yaml))
    app.add(MoviesAssembly())
    return app
  }()
}
