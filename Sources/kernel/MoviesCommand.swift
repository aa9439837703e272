import Composition
import Domain
import Foundation
import KernelCommands
import MoviesKit

/// `kernel movies …`: the movie service of the profile's stack.
struct MoviesCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "movies", abstract: "Movies by id and the yearly top lists.",
    subcommands: [TopGrossing.self, TopRated.self, Get.self, Rate.self, Poster.self])

  struct TopGrossing: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "top-grossing", abstract: "The year's movies, highest grossing first.")
    @OptionGroup var list: YearList
    func run() async throws { try await list.run(byGrossing: true) }
  }

  struct TopRated: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "top-rated", abstract: "The year's movies, best rated first.")
    @OptionGroup var list: YearList
    func run() async throws { try await list.run(byGrossing: false) }
  }

  struct Get: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "get",
      abstract: "Movies by id, several at once (bounded), in the order given.",
      discussion: """
        Shows progress on a terminal, none when stderr is piped. When some ids cannot be had, \
        the others are shown, one sentence names the rest, and the exit code is the first's \
        cause (66 not found); JSON lists them as "missing".
        """)
    @OptionGroup var global: GlobalOptions

    @Argument(
      help: ArgumentHelp(
        "Movie ids, e.g. 1 2 3; - reads them from standard input (spaces, commas or lines).",
        valueName: "id"))
    var ids: [String] = []

    @Option(help: "How many requests at once (1-64).")
    var concurrency = 8

    @OptionGroup var watching: WatchOption

    /// The ids of the command line: the ones `BulkArguments` took out before parsing, then the rest.
    private var given: [String] { (BulkArguments.current ?? []) + ids }

    func validate() throws {
      guard !given.isEmpty else {
        throw ValidationError("Name at least one movie id, e.g. kernel movies get 1.")
      }
      guard (1...64).contains(concurrency) else {
        throw ValidationError("--concurrency must be between 1 and 64, not \(concurrency).")
      }
      if let bad = given.first(where: { $0 != "-" && (Int($0) ?? 0) < 1 }) {
        throw ValidationError("Movie ids are positive whole numbers; \(bad) is not one.")
      }
    }

    func run() async throws {
      let ids = try BulkArguments.resolve(given, noun: "movie id")
      if watching.watch {
        guard let id = ids.first, ids.count == 1 else {
          throw ValidationError("--watch follows one movie; name one id, not \(ids.count).")
        }
        let invocation = try Invocation(global)
        return try await invocation.watch(
          .movie(id: id), from: "movies", show: MovieOutput.watched(invocation.format) { [$0] })
      }
      let limit = concurrency
      try await MovieOutput.show(global) { composed, early in
        try await Self.fetch(ids, limit: limit, from: composed, early: ids.count == 1 ? early : nil)
      }
    }

    /// Fetches `ids` with at most `limit` in flight, keeping their order. An id that fails does
    /// not stop the others: when any failed, `MissingMovies` carries the ones that arrived.
    static func fetch(
      _ ids: [Int], limit: Int, from composed: Composed,
      early: (@Sendable (Answer<[Movie]>) -> Void)? = nil
    ) async throws -> Answer<[Movie]> {
      let movies = try composed.stack("movies")
      let earlyOne = early.map { early in
        { @Sendable (one: Answer<Movie>) in early(one.map { [$0] }) }
      }
      var found = [Answer<Movie>?](repeating: nil, count: ids.count)
      var failures: [(index: Int, error: any Error)] = []
      let progress = Terminal.showsProgress && ids.count > 1
      // The child's result is a struct, not a tuple holding `Result<Movie, any Error>`: Swift
      // 6.3.1 miscompiles that tuple under -O (the parent reads garbage and traps; see
      // Tests/PlatformTests and ../shared/platform/taskgroup-tuple-result.swift).
      await withTaskGroup(of: OneMovie.self) { group in
        var next = 0
        var done = 0
        func start() {
          guard next < ids.count else { return }
          let index = next
          next += 1
          group.addTask {
            do {
              return OneMovie(
                index: index,
                movie: try await movies.answer(.movie(id: ids[index]), early: earlyOne))
            } catch {
              return OneMovie(index: index, error: error)
            }
          }
        }
        for _ in 0..<min(limit, ids.count) { start() }
        while let fetched = await group.next() {
          if let movie = fetched.movie {
            found[fetched.index] = movie
          } else {
            failures.append((fetched.index, fetched.error ?? CancellationError()))
          }
          done += 1
          if progress { Terminal.progress("movies: \(done)/\(ids.count)") }
          start()
        }
      }
      if progress { Terminal.endProgress() }
      try Task.checkCancellation()
      let answer = Answer.gathered(found.compactMap { $0 })
      guard let first = failures.min(by: { $0.index < $1.index }) else { return answer }
      // A setup that cannot work (an unusable cache, a bad config) is one sentence of its own,
      // not a movie that could not be had.
      if failures.count == ids.count, ServiceFailure.of(first.error) == .configuration {
        throw first.error
      }
      throw MissingMovies(
        answer: answer, missing: failures.map { ids[$0.index] }.sorted(),
        requested: ids.count, cause: first.error)
    }
  }
}

/// What one child of `movies get`'s task group hands back: a struct, because a tuple holding
/// `Result<Movie, any Error>` is miscompiled under -O by Swift 6.3.1 (swiftlang/swift#81771).
private struct OneMovie: Sendable {
  let index: Int
  var movie: Answer<Movie>?
  var error: (any Error)?

  init(index: Int, movie: Answer<Movie>) {
    self.index = index
    self.movie = movie
  }

  init(index: Int, error: any Error) {
    self.index = index
    self.error = error
  }
}

/// Some of the movies `movies get` asked for could not be had: the others are shown, then this
/// is the failure, with the exit code of the first id's cause.
struct MissingMovies: Error, ClassifiedError, CustomStringConvertible {
  /// The movies that arrived, and from where.
  let answer: Answer<[Movie]>
  let missing: [Int]
  let requested: Int
  let cause: any Error

  var failure: ServiceFailure { ServiceFailure.of(cause) ?? .unavailable }

  var description: String {
    let shown = missing.prefix(10).map(String.init).joined(separator: ", ")
    let ids = missing.count > 10 ? "\(shown) and \(missing.count - 10) more" : shown
    let which =
      missing.count == 1
      ? "Movie \(ids)" : "\(missing.count) of the \(requested) movies asked for (\(ids))"
    let others = requested - missing.count
    let rest = others == 1 ? "the other one is shown" : "the other \(others) are shown"
    let cause = Failure.sentence(cause)
    if missing.count == requested { return "No movie could be had: \(cause)" }
    return "\(which) could not be had, \(rest): \(cause)"
  }
}

/// What `top-grossing` and `top-rated` take (`--year`, checked before any request, and
/// `--watch`) and how both run: the year's list, by grossing or by rating.
struct YearList: ParsableArguments {
  @OptionGroup var global: GlobalOptions
  @Option(help: "The year, e.g. 2016.")
  var year: Int
  @OptionGroup var watching: WatchOption

  func validate() throws {
    guard (1888...2200).contains(year) else {
      throw ValidationError("--year must be a year between 1888 and 2200, not \(year).")
    }
  }

  func run(byGrossing: Bool) async throws {
    let year = year
    guard !watching.watch else {
      let invocation = try Invocation(global)
      return try await invocation.watch(
        byGrossing ? .topGrossingMovies(year: year) : .topRatedMovies(year: year), from: "movies",
        show: MovieOutput.watched(invocation.format) { $0 })
    }
    try await MovieOutput.show(global) {
      try await $0.stack("movies").answer(
        byGrossing ? .topGrossingMovies(year: year) : .topRatedMovies(year: year), early: $1)
    }
  }
}

extension MoviesCommand {
  /// `kernel movies rate ID SCORE`: a write, sent at once or kept in the outbox.
  struct Rate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "rate", abstract: "Rate a movie from 1 to 100.",
      discussion: """
        Sends POST movies/ID/ratings with {"score": SCORE} through the profile's movies stack. \
        With an outbox over the api ([..., outbox, api]), a rating the api cannot take now \
        (unreachable, 5xx) is kept in the outbox and sent later by `outbox sync` or the next run \
        that reaches the api; over the store ([outbox, store], the offline profile) every rating \
        is kept; with no outbox it is sent or fails. A kept rating exits 0. \
        With --if-unchanged the rating is sent with If-Match, the ETag of the movie as \
        `movies get ID` stored it, and the api refuses it (a conflict, exit 65) if the movie \
        changed since; a movie seen only in a list has no ETag stored, so the rating is \
        refused at once, nothing sent or kept: read it with `movies get ID` first.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The movie's id.") var id: Int
    @Argument(help: "The score, from 1 to 100.") var score: Int
    @Flag(help: "Only if the movie is unchanged since `movies get ID` stored it (If-Match).")
    var ifUnchanged = false

    func validate() throws {
      guard id >= 1 else {
        throw ValidationError("Movie ids are positive whole numbers; \(id) is not one.")
      }
      guard (1...100).contains(score) else {
        throw ValidationError("A score is from 1 to 100, not \(score).")
      }
    }

    func run() async throws {
      let invocation = try Invocation(global)
      let (id, score, ifUnchanged) = (id, score, ifUnchanged)
      let written = try await invocation.write(
        try .rate(movie: id, score: score, ifUnchanged: ifUnchanged), to: "movies")
      switch written {
      case .queued(let write): try invocation.sayQueued(write)
      case .applied(let problem):
        // Exit 0: the rating is done; a second run would rate again.
        try Reply.say(
          invocation,
          "Rated movie \(id) \(score): the api took the rating, but its answer could not be"
            + " read (\(problem)); it is applied, so do not rate again.",
          ["state": "applied", "movieId": id, "score": score, "problem": problem])
      case .sent(let rating):
        if invocation.format == .json {
          try Terminal.printExact(
            try Reply.json([
              "state": "sent",
              "rating": ["id": rating.id, "movieId": rating.movieId, "score": rating.score],
            ]))
        } else {
          try Terminal.print(
            "Rated movie \(rating.movieId) \(rating.score) of 100; the api's id for the rating is \(rating.id)."
          )
        }
      }
    }
  }
}

extension MoviesCommand {
  /// `kernel movies poster ID --output FILE`: a download, resumed when a partial file is there.
  struct Poster: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "poster", abstract: "Download a movie's poster to a file.",
      discussion: """
        Sends GET movies/ID/poster and streams the body to a partial file beside FILE \
        (.FILE.partial), moved into place only when complete and of the length announced. \
        A download cut short (the connection, Ctrl-C, a killed process) is resumed by the \
        next run with Range and If-Range; it starts over when the poster changed. Shows a \
        progress bar on a terminal, none when stderr is piped. --output - writes it to \
        standard output as it comes (not to a terminal), with no partial file. Needs a \
        profile that asks the api.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The movie's id.") var id: Int
    @Option(name: .shortAndLong, help: "The file to write; - for standard output.")
    var output: String

    func validate() throws {
      guard id >= 1 else {
        throw ValidationError("Movie ids are positive whole numbers; \(id) is not one.")
      }
      guard !output.isEmpty, !output.hasSuffix("/") else {
        throw ValidationError("--output must name a file, not \"\(output)\".")
      }
    }

    func run() async throws {
      let invocation = try Invocation(global)
      let file = try Invocation.downloadFile(output)
      let response = try await invocation.download(.moviePoster(id: id), from: "movies", to: file)
      let fields: [String: any Sendable] = [
        "file": file.path, "bytes": Int(response.bytes), "status": response.status, "movieId": id,
      ]
      let size = "\(Reply.grouped(Int(response.bytes))) bytes"
      guard file.path != "/dev/stdout",
        (try? file.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true
      else {
        // Standard output, a device or a pipe took the poster itself: the report goes beside it.
        Terminal.error(
          invocation.format == .json
            ? try Reply.json(fields)
            : "Wrote the poster of movie \(id) to \(file.path) (\(size)).")
        return
      }
      try Reply.say(
        invocation, "Saved the poster of movie \(id) to \(file.path) (\(size)).",
        fields)
    }
  }
}
