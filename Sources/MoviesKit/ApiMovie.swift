import Api
import Domain
import Foundation

/// A movie as the API sends it.
public struct ApiMovie: Decodable, Sendable, Hashable {
  /// The api's id.
  public let id: Int
  /// The title.
  public let name: String
  /// The release year.
  public let year: Int
  /// The US release day.
  public let releaseDate: Date
  /// Box-office gross in US dollars.
  public let grossing: Int
  /// A score out of 100.
  public let rating: Double
  /// Billing order.
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
  /// Their name.
  public let name: String

  /// The domain value.
  public func convert() -> MovieActor { MovieActor(name: name) }
}
