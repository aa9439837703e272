import Api
import KernelTesting
import Layers
import MoviesKit

extension LoopbackApi {
  /// The movie calls over this client, under no layers.
  public var movies: any MovieService { MovieStack(ServiceStack(client: client, layers: [])) }
}
