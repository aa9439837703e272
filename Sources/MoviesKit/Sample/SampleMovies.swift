/// The movies the bundled API knows, as the API serves them.
///
/// The ten highest-grossing movies of 2016 at the US box office (the list of the 2017
/// CocoaHeads talk) and the top five of 2015. Grossing is the final domestic (US and Canada)
/// gross in dollars; rating is the Metacritic metascore; release dates are US releases.
public struct SampleMovie: Sendable, Hashable, Encodable {
  /// The size of every movie's poster (`GET movies/{id}/poster`) unless `serve --poster-bytes`
  /// says otherwise.
  public static let defaultPosterBytes = 200_000

  /// The api's id.
  public let id: Int
  /// The title.
  public let name: String
  /// The release year.
  public let year: Int
  /// `yyyy-MM-dd`, as the API sends it.
  public let releaseDate: String
  /// Final domestic gross in US dollars.
  public let grossing: Int
  /// The Metacritic metascore.
  public let rating: Double
  /// Billing order.
  public let cast: [SampleActor]

  init(
    _ id: Int, _ name: String, _ releaseDate: String, _ grossing: Int, _ rating: Double,
    _ cast: [String]
  ) {
    self.id = id
    self.name = name
    self.year = Int(releaseDate.prefix(4)) ?? 0
    self.releaseDate = releaseDate
    self.grossing = grossing
    self.rating = rating
    self.cast = cast.map(SampleActor.init(name:))
  }

  /// This movie as the api sends it once its rating is `rating`: a change a changes feed
  /// (`SampleChanges`) or a test's server can send.
  public func rated(_ rating: Double) -> SampleMovie {
    SampleMovie(id, name, releaseDate, grossing, rating, cast.map(\.name))
  }
}

/// A cast member as the API sends it.
public struct SampleActor: Sendable, Hashable, Encodable {
  /// Their name.
  public let name: String
}

extension SampleMovie {
  /// Every bundled movie, by id.
  public static let all: [SampleMovie] = [
    SampleMovie(
      1, "Finding Dory", "2016-06-17", 486_295_561, 77,
      ["Ellen DeGeneres", "Albert Brooks", "Ed O'Neill"]),
    SampleMovie(
      2, "Rogue One: A Star Wars Story", "2016-12-16", 532_177_324, 65,
      ["Felicity Jones", "Diego Luna", "Alan Tudyk"]),
    SampleMovie(
      3, "Captain America: Civil War", "2016-05-06", 408_084_349, 75,
      ["Chris Evans", "Robert Downey Jr.", "Scarlett Johansson"]),
    SampleMovie(
      4, "The Secret Life of Pets", "2016-07-08", 368_384_330, 61,
      ["Louis C.K.", "Eric Stonestreet", "Kevin Hart"]),
    SampleMovie(
      5, "The Jungle Book", "2016-04-15", 364_001_123, 77,
      ["Neel Sethi", "Bill Murray", "Ben Kingsley"]),
    SampleMovie(
      6, "Deadpool", "2016-02-12", 363_070_709, 65,
      ["Ryan Reynolds", "Morena Baccarin", "T.J. Miller"]),
    SampleMovie(
      7, "Zootopia", "2016-03-04", 341_268_248, 78,
      ["Ginnifer Goodwin", "Jason Bateman", "Idris Elba"]),
    SampleMovie(
      8, "Batman v Superman: Dawn of Justice", "2016-03-25", 330_360_194, 44,
      ["Ben Affleck", "Henry Cavill", "Amy Adams"]),
    SampleMovie(
      9, "Suicide Squad", "2016-08-05", 325_100_054, 40,
      ["Will Smith", "Jared Leto", "Margot Robbie"]),
    SampleMovie(
      10, "Doctor Strange", "2016-11-04", 232_641_920, 72,
      ["Benedict Cumberbatch", "Chiwetel Ejiofor", "Rachel McAdams"]),
    SampleMovie(
      11, "Star Wars: The Force Awakens", "2015-12-18", 936_662_225, 80,
      ["Daisy Ridley", "John Boyega", "Harrison Ford"]),
    SampleMovie(
      12, "Jurassic World", "2015-06-12", 652_270_625, 59,
      ["Chris Pratt", "Bryce Dallas Howard", "Vincent D'Onofrio"]),
    SampleMovie(
      13, "Avengers: Age of Ultron", "2015-05-01", 459_005_868, 66,
      ["Robert Downey Jr.", "Chris Hemsworth", "Mark Ruffalo"]),
    SampleMovie(
      14, "Inside Out", "2015-06-19", 356_461_711, 94,
      ["Amy Poehler", "Phyllis Smith", "Bill Hader"]),
    SampleMovie(
      15, "Furious 7", "2015-04-03", 353_007_020, 67,
      ["Vin Diesel", "Paul Walker", "Dwayne Johnson"]),
  ]

  /// The movie with `id`, if bundled.
  public static func movie(id: Int) -> SampleMovie? { all.first { $0.id == id } }

  /// A made-up movie for an id past the bundled ones, the same every time: for load tests
  /// that need many distinct movies. Its year is 2014, which no list of the bundled data uses.
  public static func generated(id: Int) -> SampleMovie {
    let day = id % 28 + 1
    let month = id % 12 + 1
    return SampleMovie(
      id, "Generated Movie \(id)",
      "2014-\(month < 10 ? "0" : "")\(month)-\(day < 10 ? "0" : "")\(day)",
      1_000_000 + (id % 90_000_000) * 7_919 % 90_000_000, Double(30 + id % 70),
      ["Actor \(id)-1", "Actor \(id)-2", "Actor \(id)-3"])
  }

  /// The year's movies, highest grossing first.
  public static func topGrossing(year: Int) -> [SampleMovie] {
    all.filter { $0.year == year }.sorted { $0.grossing > $1.grossing }
  }

  /// The year's movies, best rated first (ties by grossing).
  public static func topRated(year: Int) -> [SampleMovie] {
    all.filter { $0.year == year }.sorted { ($0.rating, $0.grossing) > ($1.rating, $1.grossing) }
  }
}
