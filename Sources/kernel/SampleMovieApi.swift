import KernelCommands
import KernelServe
import MoviesKit
import SampleApi

/// The movie example's sample api as `kernel serve` answers it, with the options it adds to
/// `serve`: made-up movies past the bundled ones, ratings that conflict, the posters' size.
struct SampleMovieApi: SampleApiOptions {
  static let title = "the sample movie API"

  @Option(
    name: .customLong("extra-movies"),
    help: "Also serve made-up movies with ids up to 15+N.")
  var extraMovies = 0

  @Option(
    name: .customLong("conflict-movie"),
    help: ArgumentHelp(
      "Answer ratings of this movie with 409, as if it changed meanwhile (repeatable).",
      valueName: "id"))
  var conflictMovies: [Int] = []

  @Option(
    name: .customLong("poster-bytes"),
    help: ArgumentHelp("The size of every movie's poster, GET movies/{id}/poster.", valueName: "N"))
  var posterBytes = SampleMovie.defaultPosterBytes

  init() {}

  func validate() throws {
    try Self.check("--extra-movies", extraMovies, in: 0...1_000_000)
    try Self.check("--poster-bytes", posterBytes, in: 0...(1 << 30))
    if let bad = conflictMovies.first(where: { $0 < 1 }) {
      throw ValidationError(
        "--conflict-movie takes a movie id, a positive whole number, not \(bad).")
    }
  }

  func check(servingFixtures: Bool) throws {
    guard servingFixtures else { return }
    if extraMovies > 0 {
      throw ValidationError("--extra-movies adds movies to the sample movie API, not to fixtures.")
    }
    if !conflictMovies.isEmpty {
      throw ValidationError(
        "--conflict-movie changes the sample movie API's ratings, not fixtures.")
    }
  }

  func served(basePath: String) -> FixtureRoutes {
    let ratings = SampleRatings(conflicts: Set(conflictMovies))
    var routes = FixtureRoutes.sampleMovies(
      basePath: basePath, extraMovies: extraMovies, ratings: ratings, posterBytes: posterBytes)
    routes.summary = { "\(Reply.count(ratings.appliedCount, "rating")) applied" }
    return routes
  }
}
