import Domain
import Foundation
import KernelTesting
import Store
import Testing

extension TemporaryDirectory {
  /// The cache database's file inside it.
  var cache: URL { appending("cache.sqlite") }
}

func day(_ text: String) throws -> Date { try #require(CalendarDay.date(from: text)) }

func movie(
  _ id: Int, _ name: String, year: Int = 2016, grossing: Int = 100, rating: Double = 50,
  cast: [String] = ["A", "B", "C"]
) throws -> Movie {
  Movie(
    id: id, name: name, year: year, releaseDate: try day("\(year)-06-17"), grossing: grossing,
    rating: rating,
    cast: cast.map(MovieActor.init(name:)))
}
