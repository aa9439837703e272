import Domain
import Foundation
import KernelTesting
import MoviesKit

extension Movie {
  /// A movie for a test: released on 17 June of `year`, with a three-name cast by default.
  public static func fixture(
    _ id: Int, _ name: String, year: Int = 2016, grossing: Int = 100, rating: Double = 50,
    cast: [String] = ["A", "B", "C"]
  ) throws -> Movie {
    guard let release = CalendarDay.date(from: "\(year)-06-17") else {
      throw TestFailure("\(year) is not a year a movie can be released in")
    }
    return Movie(
      id: id, name: name, year: year, releaseDate: release, grossing: grossing, rating: rating,
      cast: cast.map(MovieActor.init(name:)))
  }
}
