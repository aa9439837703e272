import Foundation

/// A movie as the app sees it, whichever layer produced it.
public struct Movie: Sendable, Hashable, Identifiable, Codable {
  public let id: Int
  public let name: String
  public let year: Int
  /// Midnight UTC of the release day.
  public let releaseDate: Date
  /// Box-office gross in US dollars.
  public let grossing: Int
  /// A score out of 100.
  public let rating: Double
  /// Billing order.
  public let cast: [MovieActor]

  public init(
    id: Int, name: String, year: Int, releaseDate: Date, grossing: Int, rating: Double,
    cast: [MovieActor]
  ) {
    self.id = id
    self.name = name
    self.year = year
    self.releaseDate = releaseDate
    self.grossing = grossing
    self.rating = rating
    self.cast = cast
  }
}

/// Someone in a movie's cast.
public struct MovieActor: Sendable, Hashable, Codable {
  public let name: String

  public init(name: String) { self.name = name }
}
