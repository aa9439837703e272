import Composition
import Domain
import Foundation
import KernelCommands
import MoviesKit
import Synchronization

/// Prints movies as a table with a footer naming their origin and age, or as the contract's
/// JSON: `{"origin": …, "movies": [{"id", "name", "year", "releaseDate", "grossing", "rating",
/// "cast": [{"name"}]}]}`, with `"missing": [ids]` when `movies get` could not have some.
enum MovieOutput {
  /// Starts the run, and prints what `fetch` gets from the profile's stack for `movies`.
  ///
  /// Under `cacheThenNetwork` a command of one call prints the cached answer as soon as it is
  /// read, then the fresh one only when it differs (JSON: one object per answer, one per line).
  /// Before returning it waits, bounded by the resource timeout, for refreshes a
  /// stale-while-revalidate cache started behind its answer, so they are stored before exit.
  static func show(
    _ options: GlobalOptions,
    _ fetch:
      @escaping @Sendable (Composed, _ early: @escaping @Sendable (Answer<[Movie]>) -> Void)
      async throws -> Answer<[Movie]>
  ) async throws {
    let invocation = try Invocation(options)
    let early = EarlyPrint(invocation.format)
    let fetched = try await invocation.answered { composed -> Answer<([Movie], MissingMovies?)> in
      do { return try await fetch(composed, early.print).map { ($0, nil) } } catch let partial
        as MissingMovies
      {
        // None at all is the run's failure, said as the invocation says one.
        guard !partial.answer.value.isEmpty else { throw partial }
        return partial.answer.map { ($0, partial) }
      }
    }
    if let failure = early.failure { throw failure }
    let (movies, missing) = fetched.value
    if let shown = early.shown, shown == movies {
      if invocation.format == .text { try Terminal.print("The api's answer is the same.") }
    } else {
      switch invocation.format {
      case .json:
        // A script learns which ids were not had from the JSON, not only from the exit code.
        var fields = fetched.fields
        if let missing { fields["missing"] = .array(missing.missing.map { .integer($0) }) }
        try printJSON(movies, fields: fields)
      default: try printText(movies, fetched)
      }
    }
    if let missing { throw missing }
  }

  /// How a watch of movies is shown (`Invocation.watch(_:from:show:)`): the list (`list` makes
  /// one of the call's value) at once and again at each change, until interrupted: the table
  /// with its footer (a terminal redraws it in place), or one JSON object per line; nothing
  /// stored yet is no movies from origin `none` in JSON (the text is `Invocation.watch`'s); a
  /// failed refresh is a warning.
  static func watched<Value: Sendable>(
    _ format: OutputFormat, movies list: @escaping @Sendable (Value) -> [Movie]
  ) -> @Sendable (Watched<Value>, Bool) throws -> Void {
    { element, _ in
      switch (element, format) {
      case (.answer(let fetched), .json): try printJSON(list(fetched.value), fields: fetched.fields)
      case (.answer(let fetched), _): try printText(list(fetched.value), fetched)
      case (.nothingStored, _): try printJSON([], fields: ["origin": .string("none")])
      case (.failed(let failure), _), (.ended(let failure), _):
        Terminal.warn("The api could not be asked: \(failure)")
      }
    }
  }

  /// Prints a `cacheThenNetwork` cache's stored copy the moment it is read, and remembers it.
  final class EarlyPrint: Sendable {
    private let format: OutputFormat
    private let printed = Mutex<[Movie]?>(nil)
    private let failed = Mutex<(any Error)?>(nil)

    init(_ format: OutputFormat) { self.format = format }

    var shown: [Movie]? { printed.withLock { $0 } }

    /// Why the early answer could not be printed (the output is gone): thrown once the call
    /// returns, as the callback cannot throw.
    var failure: (any Error)? { failed.withLock { $0 } }

    @Sendable func print(_ answer: Answer<[Movie]>) {
      let movies = answer.value
      let first = printed.withLock { printed in
        guard printed == nil else { return false }
        printed = movies
        return true
      }
      guard first else { return }
      do {
        switch format {
        case .json: try MovieOutput.printJSON(movies, fields: ["origin": .string("cache")])
        default:
          let what = Reply.count(movies.count, "movie")
          try Terminal.print(MovieOutput.table(movies))
          try Terminal.print(
            "\(what) from cache, \(Reply.age(answer.age)); asking the api for news")
        }
      } catch {
        failed.withLock { $0 = error }
      }
    }
  }

  /// Prints the contract's JSON: `{"movies": [...], "origin": ...}`, keys sorted, written by
  /// `JSONEncoder` a slice of movies at a time (`Reply.printJSON`).
  static func printJSON(_ movies: [Movie], fields: [String: JSONValue]) throws {
    try Reply.printJSON(list: "movies", movies.map(ShownMovie.init), fields: fields)
  }

  /// A movie as the contract shows it: the release day as `yyyy-MM-dd` (ISO 8601), a rating
  /// that is not a number as null.
  private struct ShownMovie: Encodable {
    let movie: Movie

    private enum Keys: String, CodingKey {
      case id, name, year, releaseDate, grossing, rating, cast
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Keys.self)
      try container.encode(movie.id, forKey: .id)
      try container.encode(movie.name, forKey: .name)
      try container.encode(movie.year, forKey: .year)
      try container.encode(CalendarDay.string(from: movie.releaseDate), forKey: .releaseDate)
      try container.encode(movie.grossing, forKey: .grossing)
      try container.encode(movie.rating.isFinite ? movie.rating : nil, forKey: .rating)
      try container.encode(movie.cast, forKey: .cast)
    }
  }

  /// The table, none for no movies (a header over nothing), then the footer of `answer`.
  static func printText<Value>(_ movies: [Movie], _ answer: Answer<Value>) throws {
    if !movies.isEmpty { try Terminal.print(table(movies)) }
    try Terminal.print(answer.footer(Reply.count(movies.count, "movie")))
  }

  static func table(_ movies: [Movie]) -> String {
    let header = ["#", "Title", "Released", "Grossing (USD)", "Rating", "Cast"]
    let rows = movies.enumerated().map { index, movie in
      [
        "\(index + 1)", TerminalText.escaped(movie.name, keepingNewlines: false),
        CalendarDay.string(from: movie.releaseDate), Reply.grouped(movie.grossing),
        String(format: "%.1f", movie.rating),
        TerminalText.escaped(
          movie.cast.prefix(3).map(\.name).joined(separator: ", "), keepingNewlines: false),
      ]
    }
    return Reply.table(header, rows, rightAligned: [0, 3, 4])
  }
}
