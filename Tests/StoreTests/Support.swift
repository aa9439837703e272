import Domain
import Foundation
import Store
import Testing

/// A folder of its own under the system's temporary folder, removed by `cleanUp()`.
struct TemporaryFolder {
  let url = FileManager.default.temporaryDirectory.appendingPathComponent(
    "kernel-store-\(UUID().uuidString)")
  var cache: URL { url.appendingPathComponent("cache.sqlite") }
  func cleanUp() { try? FileManager.default.removeItem(at: url) }
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
