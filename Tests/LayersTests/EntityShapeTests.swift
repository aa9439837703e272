import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

@testable import Layers

/// How a list of entities is split into rows and joined again.
@Suite struct EntityShapeTests {
  private let shape = EntityShape<[Movie]>.list(Movie.self)

  @Test func aListSplitIntoRowsJoinsBackInOrder() throws {
    let movies = [
      try Movie.fixture(3, "Captain America: Civil War"), try Movie.fixture(1, "Finding Dory"),
    ]
    let rows = try shape.entities(of: movies)
    #expect(rows.map(\.id) == ["3", "1"])
    #expect(try shape.value(of: rows.map(\.payload)) == movies)
    #expect(try shape.value(of: []) == [])
  }

  /// Rows are joined as one JSON array: a row holding two entities, or none, is damage.
  @Test func aRowThatIsNotOneEntityIsRefused() throws {
    let rows = try shape.entities(of: [try Movie.fixture(1, "A"), try Movie.fixture(2, "B")])
    let pair = rows[0].payload + Data(",".utf8) + rows[1].payload
    #expect(throws: (any Error).self) { try shape.value(of: [pair]) }
    #expect(throws: (any Error).self) { try shape.value(of: [rows[0].payload, Data()]) }
    #expect(throws: (any Error).self) { try shape.value(of: [Data("[]".utf8)]) }
  }

  /// An item call named for its type: `.item(MovieDetail.self, id: 7)` is `movieDetail`.
  @Test func anItemCallIsNamedAndKeyedForItsEntity() {
    struct MovieDetail: Codable, Sendable, Identifiable { let id: Int }
    let call = ServiceCall.item(Movie.self, id: 3)
    #expect((call.name, call.key, call.summary) == ("movie", "Movie/3", "movie 3"))
    #expect(call.entities?.itemID == "3")
    let detail = ServiceCall.item(MovieDetail.self, id: 7)
    #expect(
      (detail.name, detail.key, detail.summary) == ("movieDetail", "MovieDetail/7", "movieDetail 7")
    )
  }
}
