import Api
import KernelTesting
import Layers
import MoviesKit

extension LoopbackApi {
  /// The movie service over this client: the api source under no layers.
  public var movies: any MovieService {
    LayeredMovieService(base: .plain(ApiMovieService(client: client)), layers: [])
  }
}
