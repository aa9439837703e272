import Foundation

/// Every request the API layer can make. Services name a route; the route builds its URL for
/// the current environment, so nothing sends to an address that is not one of these.
public enum Route: Sendable, Hashable, CustomStringConvertible {
  /// A token, as plain text or at a key path.
  case auth
  case movie(id: Int)
  case topGrossingMovies(year: Int)
  case topRatedMovies(year: Int)

  public var method: String { "GET" }

  /// The path below the environment's base URL.
  public var path: String {
    switch self {
    case .auth: "auth"
    case .movie(let id): "movies/\(id)"
    case .topGrossingMovies(let year): "movies/topGrossing/\(year)"
    case .topRatedMovies(let year): "movies/topRated/\(year)"
    }
  }

  /// Safe to send twice: a retry may repeat it.
  public var isIdempotent: Bool {
    method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE"
  }

  public func url(in environment: ApiEnvironment) -> URL {
    URL(string: path, relativeTo: environment.baseURL)?.absoluteURL ?? environment.baseURL
  }

  /// `GET movies/topGrossing/2016`: how errors and logs name a request.
  public var description: String { "\(method) \(path)" }
}
