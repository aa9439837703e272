import ArgumentParser
import Domain

/// `kernel movies …`: the movie service of the profile's stack.
struct MoviesCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "movies", abstract: "Movies by id and the yearly top lists.",
    subcommands: [TopGrossing.self, TopRated.self, Get.self])

  struct TopGrossing: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "top-grossing", abstract: "The year's movies, highest grossing first.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var year: YearOption

    func run() async throws {
      try await MovieOutput.show(global) { try await $0.topGrossingMovies(year: year.year) }
    }
  }

  struct TopRated: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "top-rated", abstract: "The year's movies, best rated first.")
    @OptionGroup var global: GlobalOptions
    @OptionGroup var year: YearOption

    func run() async throws {
      try await MovieOutput.show(global) { try await $0.topRatedMovies(year: year.year) }
    }
  }

  struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Movies by id, several at once (bounded), in the order given.",
      discussion: "Shows progress on a terminal, none when stderr is piped.")
    @OptionGroup var global: GlobalOptions

    @Argument(help: "Movie ids, e.g. 1 2 3.")
    var ids: [Int]

    @Option(help: "How many requests at once (1-64).")
    var concurrency = 8

    func validate() throws {
      guard !ids.isEmpty else {
        throw ValidationError("Name at least one movie id, e.g. kernel movies get 1.")
      }
      guard (1...64).contains(concurrency) else {
        throw ValidationError("--concurrency must be between 1 and 64, not \(concurrency).")
      }
      if let bad = ids.first(where: { $0 < 1 }) {
        throw ValidationError("Movie ids are positive whole numbers; \(bad) is not one.")
      }
    }

    func run() async throws {
      let ids = self.ids
      let limit = concurrency
      try await MovieOutput.show(global) { try await Self.fetch(ids, limit: limit, from: $0) }
    }

    /// Fetches `ids` with at most `limit` in flight, keeping their order; the first failure
    /// cancels the rest.
    static func fetch(_ ids: [Int], limit: Int, from service: any MovieService) async throws
      -> [Movie]
    {
      var found = [Movie?](repeating: nil, count: ids.count)
      let progress = Terminal.showsProgress && ids.count > 1
      try await withThrowingTaskGroup(of: (Int, Movie).self) { group in
        var next = 0
        var done = 0
        func start() {
          guard next < ids.count else { return }
          let index = next
          next += 1
          group.addTask { (index, try await service.movie(id: ids[index])) }
        }
        for _ in 0..<min(limit, ids.count) { start() }
        while let (index, movie) = try await group.next() {
          found[index] = movie
          done += 1
          if progress { Terminal.progress("movies: \(done)/\(ids.count)") }
          start()
        }
      }
      if progress { Terminal.endProgress() }
      return found.compactMap { $0 }
    }
  }
}

/// `--year`, checked before any request.
struct YearOption: ParsableArguments {
  @Option(help: "The year, e.g. 2016.")
  var year: Int

  func validate() throws {
    guard (1888...2200).contains(year) else {
      throw ValidationError("--year must be a year between 1888 and 2200, not \(year).")
    }
  }
}
