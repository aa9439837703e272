import Api
import Domain
import Foundation

/// A movie as the API sends it.
public struct ApiMovie: Decodable, Sendable, Hashable {
  public let id: Int
  public let name: String
  public let year: Int
  public let releaseDate: Date
  public let grossing: Int
  public let rating: Double
  public let cast: [ApiMovieActor]

  /// The domain value.
  public func convert() -> Movie {
    Movie(
      id: id, name: name, year: year, releaseDate: releaseDate, grossing: grossing, rating: rating,
      cast: cast.map { $0.convert() })
  }
}

/// A cast member as the API sends it.
public struct ApiMovieActor: Decodable, Sendable, Hashable {
  public let name: String

  public func convert() -> MovieActor { MovieActor(name: name) }
}
