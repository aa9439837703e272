import Foundation

/// Every request the API layer can make. Services name a route; the route builds its URL for
/// the current environment, so nothing sends to an address that is not one of these.
public enum Route: Sendable, Hashable, CustomStringConvertible {
  /// A token, as plain text or at a key path.
  case auth
  case movie(id: Int)
  case topGrossingMovies(year: Int)
  case topRatedMovies(year: Int)
  /// A GET of a path below the base URL (`shows/7`), for a service of your own; it cannot leave
  /// the environment's host (see `url(in:)`).
  case get(String)

  public var method: String { "GET" }

  /// The path below the environment's base URL.
  public var path: String {
    switch self {
    case .auth: "auth"
    case .movie(let id): "movies/\(id)"
    case .topGrossingMovies(let year): "movies/topGrossing/\(year)"
    case .topRatedMovies(let year): "movies/topRated/\(year)"
    case .get(let path): String(path.drop { $0 == "/" })
    }
  }

  /// Safe to send twice: a retry may repeat it.
  public var isIdempotent: Bool {
    method == "GET" || method == "HEAD" || method == "PUT" || method == "DELETE"
  }

  /// The route's URL under the environment's base URL. A path that would resolve elsewhere
  /// (`//other.host/x`, `https://other.host/`) is taken literally, escaped, below the base URL.
  public func url(in environment: ApiEnvironment) -> URL {
    let base = environment.baseURL
    if let url = URL(string: path, relativeTo: base)?.absoluteURL,
      url.scheme == base.scheme, url.host == base.host, url.port == base.port
    {
      return url
    }
    let escaped =
      path.addingPercentEncoding(
        withAllowedCharacters: .urlPathAllowed.subtracting(
          CharacterSet(charactersIn: ":/"))) ?? ""
    return URL(string: escaped, relativeTo: base)?.absoluteURL ?? base
  }

  /// `GET movies/topGrossing/2016`: how errors and logs name a request.
  public var description: String { "\(method) \(path)" }
}
