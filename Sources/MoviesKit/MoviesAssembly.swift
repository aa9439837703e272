import Api
import Composition
import Domain
import Foundation
import Layers
import SampleApi

/// The bundled example: the `movies` service (its calls in MovieCalls.swift, its one write below;
/// sources `api` and `store`, every layer and the outbox), and the `sample` transport that
/// answers the bundled movie API in process. Registered exactly as an app registers its own
/// service.
public struct MoviesAssembly: Assembly {
  /// The movie example's parts.
  public init() {}

  /// Registers `movies` (its reads and writes) and the `sample` transport.
  public func assemble(into catalog: inout Catalog) {
    catalog.service("movies")
    catalog.transport("sample", answersInProcess: true) { _ in
      InProcessTransport.sample(SampleApiResponder(routes: .sampleMovies()))
    }
  }
}

extension WriteCall where Value == Rating {
  /// `POST movies/{id}/ratings` with `{"score": N}`: a movie's ratings go in the order they were
  /// made; sent, the cached movie is dropped (the api's rating changes); kept, the cached movie
  /// shows the score as its rating, marked pending. `ifUnchanged`: sent with `If-Match`, the
  /// ETag of the stored movie as its own answer gave it, so the api refuses it (412) if the
  /// movie changed since; with no such ETag stored (the movie seen only in a list) it is
  /// refused before anything is sent or kept (`UnknownVersion`).
  public static func rate(movie id: Int, score: Int, ifUnchanged: Bool = false) throws
    -> WriteCall
  {
    let movie = ServiceCall<Movie>.movie(id: id)
    return try WriteCall(
      "rateMovie", route: .post("movies/\(id)/ratings", body: try .json(["score": score])),
      summary: "a rating of movie \(id)", ordering: movie.key, invalidates: [movie.key],
      optimistic: [.update(movie) { $0.rating = Double(score) }],
      precondition: ifUnchanged ? movie.key : nil)
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
