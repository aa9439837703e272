import Composition
import Domain
import Foundation
import Synchronization

/// Prints movies as a table with a footer naming their origin and age, or as the contract's
/// JSON: `{"origin": …, "movies": [{"id", "name", "year", "releaseDate", "grossing", "rating",
/// "cast": [{"name"}]}]}`.
enum MovieOutput {
  /// Starts the run, resolves the profile's `MovieService`, and prints what `fetch` gets from it.
  ///
  /// Under `cacheThenNetwork` a command of one call prints the cached answer as soon as it is
  /// read, then the fresh one only when it differs (JSON: one object per answer, one per line).
  /// Before returning it waits, bounded by the resource timeout, for refreshes a
  /// stale-while-revalidate cache started behind its answer, so they are stored before exit.
  static func show(
    _ options: GlobalOptions, oneCall: Bool = true,
    _ fetch: @escaping @Sendable (any MovieService) async throws -> [Movie]
  ) async throws {
    let session = try Session(options)
    let composed = try session.services()
    let service = try composed.service((any MovieService).self)
    let clock = ContinuousClock()
    let start = clock.now
    defer {
      let elapsed = Terminal.milliseconds(clock.now - start)
      session.runtime.log("done in \(elapsed) ms; peak memory \(Terminal.peakMemoryMegabytes) MB")
    }
    let early = EarlyPrint(session.format)
    let recorder = Provenance.Recorder(early: oneCall ? early.print : nil)
    var missing: MissingMovies?
    let movies: [Movie]
    do {
      movies = try await Provenance.$recorder.withValue(recorder) {
        do { return try await fetch(service) } catch let partial as MissingMovies {
          missing = partial
          return partial.movies
        }
      }
    } catch {
      await settle(composed, session)
      throw error
    }
    await settle(composed, session)
    let elapsed = clock.now - start
    if let missing, missing.movies.isEmpty { throw missing }
    let origin = recorder.origin ?? "network"
    if let shown = early.shown, shown == movies {
      if session.format == .text { Terminal.print("The api's answer is the same.") }
    } else {
      switch session.format {
      case .json: Terminal.printExact(try json(movies, origin: origin))
      default:
        Terminal.print(table(movies))
        Terminal.print(
          footer(count: movies.count, origin: origin, recorder: recorder, elapsed: elapsed))
      }
    }
    if let missing { throw missing }
  }

  /// Waits for the cache's background refreshes, for at most the resource timeout.
  private static func settle(_ composed: ComposedProfile, _ session: Session) async {
    let pending = composed.pendingWork
    guard pending > 0 else { return }
    let limit = session.config.timeouts.resourceSeconds
    session.runtime.log("waiting for \(pending) cache refresh(es) to be stored")
    if await !composed.settle(within: .seconds(limit)) {
      Terminal.warn(
        "The cache's refresh did not finish within \(limit) s (timeouts.resourceSeconds); the stored copy was kept."
      )
    }
  }

  /// Prints a `cacheThenNetwork` cache's stored copy the moment it is read, and remembers it.
  final class EarlyPrint: Sendable {
    private let format: OutputFormat
    private let printed = Mutex<[Movie]?>(nil)

    init(_ format: OutputFormat) { self.format = format }

    var shown: [Movie]? { printed.withLock { $0 } }

    @Sendable func print(_ answer: Provenance.EarlyAnswer) {
      let movies: [Movie]
      switch answer.value {
      case let list as [Movie]: movies = list
      case let movie as Movie: movies = [movie]
      default: return
      }
      let first = printed.withLock { printed in
        guard printed == nil else { return false }
        printed = movies
        return true
      }
      guard first else { return }
      switch format {
      case .json: Terminal.printExact((try? MovieOutput.json(movies, origin: "cache")) ?? "")
      default:
        let what = movies.count == 1 ? "1 movie" : "\(movies.count) movies"
        Terminal.print(MovieOutput.table(movies))
        Terminal.print(
          "\(what) from cache, \(MovieOutput.age(answer.provenance.age)); asking the api for news")
      }
    }
  }

  /// The contract's JSON, keys in the contract's order (JSONEncoder's order is not stable).
  static func json(_ movies: [Movie], origin: String) throws -> String {
    let entries = try movies.map { movie in
      let cast = try movie.cast.map { "{\"name\":\(try quoted($0.name))}" }.joined(separator: ",")
      return "{\"id\":\(movie.id),\"name\":\(try quoted(movie.name)),\"year\":\(movie.year),"
        + "\"releaseDate\":\"\(CalendarDay.string(from: movie.releaseDate))\","
        + "\"grossing\":\(movie.grossing),\"rating\":\(movie.rating.isFinite ? "\(movie.rating)" : "null"),"
        + "\"cast\":[\(cast)]}"
    }
    return "{\"origin\":\(try quoted(origin)),\"movies\":[\(entries.joined(separator: ","))]}"
  }

  /// `text` as a JSON string, escaped by JSONEncoder.
  static func quoted(_ text: String) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.withoutEscapingSlashes]
    return String(decoding: try encoder.encode(text), as: UTF8.self)
  }

  static func table(_ movies: [Movie]) -> String {
    let header = ["#", "Title", "Released", "Grossing (USD)", "Rating", "Cast"]
    let rows = movies.enumerated().map { index, movie in
      [
        "\(index + 1)", TerminalText.escaped(movie.name, keepingNewlines: false),
        CalendarDay.string(from: movie.releaseDate), grouped(movie.grossing),
        String(format: "%.1f", movie.rating),
        TerminalText.escaped(
          movie.cast.prefix(3).map(\.name).joined(separator: ", "), keepingNewlines: false),
      ]
    }
    let rightAligned: Set<Int> = [0, 3, 4]
    let widths = header.indices.map { column in
      ([header] + rows).map { $0[column].count }.max() ?? 0
    }
    return ([header] + rows).map { row in
      row.enumerated().map { column, cell in
        let pad = String(repeating: " ", count: widths[column] - cell.count)
        return rightAligned.contains(column) ? pad + cell : cell + pad
      }
      .joined(separator: "  ").replacingOccurrences(
        of: "\\s+$", with: "", options: .regularExpression)
    }
    .joined(separator: "\n")
  }

  /// `486295561` → `486,295,561`, the same in every locale.
  static func grouped(_ number: Int) -> String {
    let digits = Array(String(number.magnitude))
    var out = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
      out.append(digit)
    }
    return number < 0 ? "-" + out : out
  }

  static func footer(count: Int, origin: String, recorder: Provenance.Recorder, elapsed: Duration)
    -> String
  {
    let what = count == 1 ? "1 movie" : "\(count) movies"
    let milliseconds = Terminal.milliseconds(elapsed)
    let age = recorder.oldestCacheAge.map(Self.age) ?? "new"
    switch origin {
    case "cache": return "\(what) from cache, \(age)"
    case "mixed": return "\(what) from the api and the cache (oldest \(age)), in \(milliseconds) ms"
    default: return "\(what) from the api in \(milliseconds) ms"
    }
  }

  /// "12 s old", "3 min old", "5 h old", "2 days old".
  static func age(_ seconds: TimeInterval) -> String {
    switch seconds {
    case ..<60: "\(Int(seconds)) s old"
    case ..<3600: "\(Int(seconds / 60)) min old"
    case ..<86400: "\(Int(seconds / 3600)) h old"
    default: "\(Int(seconds / 86400)) days old"
    }
  }
}
