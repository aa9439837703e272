import Domain
import Foundation
import KernelTesting
import Store
import Testing

@Suite struct MovieStoreTests {
  @Test func storingAgainReplacesFieldsAndCastKeepingOrder() throws {
    let folder = try TemporaryDirectory("store")
    defer { folder.remove() }
    let store = MovieStore(database: try CacheDatabase.open(at: folder.cache))
    try store.store([
      try movie(
        1, "Finding Dory", grossing: 100, cast: ["Ellen DeGeneres", "Albert Brooks", "Ed O'Neill"])
    ])
    try store.store([
      try movie(
        1, "Finding Dory (2016)", grossing: 486_295_561, cast: ["Ed O'Neill", "Ellen DeGeneres"])
    ])

    let stored = try #require(try store.movie(id: 1)).movie
    #expect(stored.name == "Finding Dory (2016)")
    #expect(stored.grossing == 486_295_561)
    #expect(stored.cast.map(\.name) == ["Ed O'Neill", "Ellen DeGeneres"])
    #expect(try store.count() == 1)
  }

  @Test func aStoredMovieComesBackEqualWithItsDate() throws {
    let store = MovieStore(database: try CacheDatabase.inMemory())
    let original = try movie(7, "Zootopia", rating: 78.5)
    let stamp = Date(timeIntervalSince1970: 1_700_000_000)
    try store.store([original], storedAt: stamp)
    let stored = try #require(try store.movie(id: 7))
    #expect(stored.movie == original)
    #expect(stored.storedAt == stamp)
  }

  @Test func yearlyListsAreOrderedAndLimited() throws {
    let store = MovieStore(database: try CacheDatabase.inMemory())
    var movies: [Movie] = []
    for id in 1...14 {
      movies.append(try movie(id, "M\(id)", grossing: id * 10, rating: Double(100 - id)))
    }
    movies.append(try movie(99, "Other year", year: 2015, grossing: 1_000_000, rating: 100))
    try store.store(movies)

    #expect(
      try store.topGrossing(year: 2016).map(\.movie.id) == [14, 13, 12, 11, 10, 9, 8, 7, 6, 5])
    #expect(try store.topRated(year: 2016, limit: 3).map(\.movie.id) == [1, 2, 3])
    #expect(try store.topGrossing(year: 2015).map(\.movie.name) == ["Other year"])
    #expect(try store.topGrossing(year: 1990).isEmpty)
    #expect(try store.topGrossing(year: 2016).first?.movie.cast.map(\.name) == ["A", "B", "C"])
  }

  @Test func valuesAreBoundNeverSpliced() throws {
    let store = MovieStore(database: try CacheDatabase.inMemory())
    let hostile = "x'); DROP TABLE movie; --"
    try store.store([try movie(1, hostile, cast: [hostile, "Robert'); DELETE FROM actor; --"])])
    let stored = try #require(try store.movie(id: 1)).movie
    #expect(stored.name == hostile)
    #expect(stored.cast.first?.name == hostile)
    #expect(try store.count() == 1)
  }

  @Test func theOfflineServiceAnswersListsFromMoviesStoredOneByOne() async throws {
    let store = MovieStore(database: try CacheDatabase.inMemory())
    try store.store([try movie(3, "Civil War", grossing: 408)])
    try store.store([try movie(1, "Finding Dory", grossing: 486)])
    let offline = OfflineMovieService(store: store)
    #expect(
      try await offline.topGrossingMovies(year: 2016).map(\.name) == ["Finding Dory", "Civil War"])
    #expect(try await offline.movie(id: 3).name == "Civil War")
  }

  @Test func theOfflineServiceSaysWhatIsNotCached() async throws {
    let offline = OfflineMovieService(store: MovieStore(database: try CacheDatabase.inMemory()))
    let error = await #expect(throws: CacheMiss.self) {
      try await offline.topRatedMovies(year: 2016)
    }
    #expect(
      error?.description.hasPrefix("Nothing is cached for the top-rated movies of 2016") == true)
    #expect(error.map { ServiceFailure.of($0) } == .unreachable)
    await #expect(throws: CacheMiss.self) { try await offline.movie(id: 1) }
  }
}
