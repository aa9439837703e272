import Foundation

/// A movie as the app sees it, whichever layer produced it.
public struct Movie: Sendable, Hashable, Identifiable, Codable {
  public let id: Int
  /// The title.
  public let name: String
  /// The release year.
  public let year: Int
  /// Midnight UTC of the release day.
  public let releaseDate: Date
  /// Box-office gross in US dollars.
  public let grossing: Int
  /// A score out of 100.
  public var rating: Double
  /// Billing order.
  public let cast: [MovieActor]

  /// A movie of these values.
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
  /// Their name.
  public let name: String

  /// A cast member named `name`.
  public init(name: String) { self.name = name }
}

/// A rating a user gives a movie: a score from 1 to 100, as the api answers it.
public struct Rating: Codable, Sendable, Hashable {
  /// The api's id for the rating.
  public let id: Int
  /// The movie rated.
  public let movieId: Int
  /// The score, from 1 to 100.
  public let score: Int

  /// A rating of these values.
  public init(id: Int, movieId: Int, score: Int) {
    self.id = id
    self.movieId = movieId
    self.score = score
  }
}
