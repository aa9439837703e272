import Api
import Domain
import Layers
import SampleApi

/// The bundled example: the `movies` service (sources `api` and `store`, every layer) and the
/// `sample` transport that answers the bundled movie API in process. Registered exactly as an
/// app registers its own service.
public struct MoviesAssembly: Assembly {
  public init() {}

  public func assemble(into catalog: inout Catalog) {
    catalog.service("movies", (any MovieService).self) { movies in
      movies.api { client in ApiMovieService(client: client) }
      movies.layered { base, layers in LayeredMovieService(base: base, layers: layers) }
    }
    catalog.transport("sample", answersInProcess: true) { _ in InProcessTransport.sample() }
  }
}
