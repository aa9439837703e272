import Composition
import Domain
import KernelCommands
import KernelServe
import MoviesOpenAPIKit

/// `movies-openapi`: Kernel's commands and the generated client's own, on any profile.
@main struct MoviesOpenAPICommand: CommandLineMain {
  static let commandLine = CommandLineApp(
    .moviesOpenAPI,
    abstract: "Movies through a client generated from openapi.yaml, sent through Kernel.",
    examples:
      "Examples:\n  movies-openapi serve &\n  movies-openapi get 1\n"
      + "  movies-openapi top-grossing --year 2016\n  movies-openapi --profile offline get 1",
    commands: [Get.self, TopGrossing.self, Rate.self]
  ).serving(fixtures: "Fixtures")
}

/// `movies-openapi get ID`: `getMovie`, through the stack the profile names for it.
struct Get: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "A movie by its id.")
  @OptionGroup var global: GlobalOptions
  @Argument(help: "The movie's id, e.g. 1.") var id: Int

  func validate() throws {
    guard id > 0 else { throw ValidationError("A movie's id is a positive number, not \(id).") }
  }

  func run() async throws {
    let invocation = try Invocation(global)
    let id = id
    try show(
      try await invocation.answered { try await MoviesAPI.movie(id, through: $0).map { [$0] } },
      invocation)
  }
}

/// `movies-openapi top-grossing --year Y`: `getTopGrossing`.
struct TopGrossing: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "top-grossing", abstract: "The year's movies, highest grossing first.")
  @OptionGroup var global: GlobalOptions
  @Option(help: "The year, e.g. 2016.") var year: Int

  func run() async throws {
    let invocation = try Invocation(global)
    let year = year
    try show(
      try await invocation.answered { try await MoviesAPI.topGrossing(year, through: $0) },
      invocation)
  }
}

/// `movies-openapi rate ID SCORE`: `rateMovie`, kept in the outbox when the api cannot take it.
struct Rate: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Rate a movie from 1 to 100.")
  @OptionGroup var global: GlobalOptions
  @Argument(help: "The movie's id.") var id: Int
  @Argument(help: "The score, from 1 to 100.") var score: Int

  func validate() throws {
    guard (1...100).contains(score) else {
      throw ValidationError("A score is from 1 to 100, not \(score).")
    }
  }

  func run() async throws {
    let invocation = try Invocation(global)
    let (id, score) = (id, score)
    let rated = try await invocation.answered {
      Answer(value: try await MoviesAPI.rate(id, score: score, through: $0), origin: .network)
    }
    switch rated.value {
    case .rated(let rating):
      try Reply.say(
        invocation, "Rated movie \(rating.movieId) \(rating.score).",
        ["movieId": rating.movieId, "score": rating.score, "id": rating.id])
    case .queued:
      try Reply.say(
        invocation, "queued: the rating of movie \(id) is kept in the outbox (outbox list).",
        ["movieId": id, "queued": true])
    }
  }
}

/// One line a movie and where they came from, or `{"movies": [...], "origin": …}`.
func show(_ movies: Answer<[MoviesAPI.Movie]>, _ invocation: Invocation) throws {
  try invocation.show(movies, as: "movies", one: "movie") { "\($0.id)  \($0.name) (\($0.year))" }
}
