import ArgumentParser
import Composition
import Dispatch
import Domain
import Foundation

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `serve`: an app's fixture folder, or Kernel's sample movie API, over HTTP on loopback, until
/// SIGINT or SIGTERM. Its help speaks of the app's own fixtures when the app has some
/// (`CommandLineApp.fixtures`), and of movies only when it serves them.
struct ServeCommand: AsyncParsableCommand {
  /// The app's default fixture folder, if it names one.
  static var appFixtures: String? { CommandLineApp.current.fixtures }

  static var configuration: CommandConfiguration {
    let app = CommandLineApp.current.app.name
    let what =
      appFixtures.map { "the fixtures of \(app) (\($0)), or another folder of JSON fixtures," }
      ?? "a folder of JSON fixtures (or Kernel's sample movie API)"
    return CommandConfiguration(
      commandName: "serve",
      abstract: "Serve \(what) on loopback, with latency and faults.",
      discussion: discussion)
  }

  static let discussion = """
    With --fixtures DIR, DIR/api/books/7.json answers GET /api/books/7, and a file or folder \
    named {id} answers any one segment (DIR/api/books/{id}.json); a file name may end in a \
    query, one file per page (DIR/api/books?page=2.json answers GET /api/books?page=2); only \
    .json files are served, each checked to hold JSON first. GET /api/auth hands out tokens unless a file answers it; \
    with --oauth, POST /api/oauth/token is an OAuth 2.0 token endpoint (client id kernel; the \
    password grant for user u with password pw, client credentials, refresh with rotation). \
    An unknown path is a 404 naming it. Latency, faults and --require-auth apply to every route.

    Prints its base URL on the first line of stdout (with --port 0, the port the system \
    chose), and on stop a summary on stderr: requests answered, calls to auth and tokens \
    issued, the most answered at once, how many expired tokens were refused and how many \
    ratings were applied (POST movies/ID/ratings honours Idempotency-Key: a repeated key \
    applies nothing twice).
    """

  @Option(
    help: ArgumentHelp(
      appFixtures.map { "A folder of JSON files to serve instead of \($0)." }
        ?? "A folder of JSON files to serve instead of the sample movie API.",
      valueName: "dir"))
  var fixtures: String?

  @Option(help: "A loopback address to listen on.") var host = "127.0.0.1"
  @Option(help: "The port; 0 picks a free one.") var port = 8080
  @Option(help: "Milliseconds to wait before each answer.") var latency = 0
  @Option(name: .customLong("fail-rate"), help: "The share of requests answered 503, 0 to 1.")
  var failRate = 0.0
  @Option(
    name: .customLong("fail-first"), help: "Answer the first N requests of every path with 503.")
  var failFirst = 0
  @Flag(name: .customLong("require-auth"), help: "Every route but auth needs a token from it.")
  var requireAuth = false
  @Option(
    name: .customLong("token-ttl"),
    help: "Seconds a token stays valid (with --require-auth; an OAuth token's expires_in).")
  var tokenTTL: Int?
  @Flag(help: "Serve an OAuth 2.0 token endpoint at POST /api/oauth/token (see above).")
  var oauth = false
  @Option(
    name: .customLong("extra-movies"),
    help: ArgumentHelp(
      "Also serve generated movies with ids up to 15+N (the sample movie API).",
      visibility: appFixtures == nil ? .default : .hidden))
  var extraMovies = 0
  @Option(
    name: .customLong("conflict-movie"),
    help: ArgumentHelp(
      "Answer ratings of this movie with 409, as if it changed meanwhile (repeatable).",
      valueName: "id", visibility: appFixtures == nil ? .default : .hidden))
  var conflictMovies: [Int] = []
  @Option(
    name: .customLong("poster-bytes"),
    help: ArgumentHelp(
      "The size of every movie's poster, GET movies/{id}/poster (the sample movie API).",
      valueName: "N", visibility: appFixtures == nil ? .default : .hidden))
  var posterBytes = SampleServing.Options.defaultPosterBytes

  func validate() throws {
    guard SampleServing.isLoopback(host) else {
      throw ValidationError(
        "--host must be a loopback address (127.0.0.1 to 127.255.255.255, ::1 or localhost), not \(host)."
      )
    }
    try Self.check("--port", port, in: 0...65535)
    guard failRate.isFinite, (0.0...1.0).contains(failRate) else {
      throw ValidationError("--fail-rate must be from 0 to 1, not \(failRate).")
    }
    try Self.check("--latency", latency, in: 0...60_000)
    try Self.check("--fail-first", failFirst, in: 0...1_000_000)
    try Self.check("--extra-movies", extraMovies, in: 0...1_000_000)
    try Self.check("--poster-bytes", posterBytes, in: 0...(1 << 30))
    if let tokenTTL { try Self.check("--token-ttl", tokenTTL, in: 1...86_400) }
    if let bad = conflictMovies.first(where: { $0 < 1 }) {
      throw ValidationError(
        "--conflict-movie takes a movie id, a positive whole number, not \(bad).")
    }
    if (fixtures ?? Self.appFixtures) != nil && extraMovies > 0 {
      throw ValidationError("--extra-movies adds movies to the sample movie API, not to fixtures.")
    }
  }

  /// A usage error naming the option and its range when `value` is out of it.
  static func check(_ option: String, _ value: Int, in range: ClosedRange<Int>) throws {
    guard range.contains(value) else {
      throw ValidationError(
        "\(option) must be from \(range.lowerBound) to \(range.upperBound), not \(value).")
    }
  }

  func run() async throws {
    var options = SampleServing.Options()
    options.latency = .milliseconds(latency)
    options.failureRate = failRate
    options.failFirst = failFirst
    options.requireAuth = requireAuth
    options.tokenLifetime = tokenTTL.map { .seconds($0) }
    if oauth {
      var server = SampleServing.OAuth()
      if let tokenTTL { server.accessTokenLifetime = .seconds(tokenTTL) }
      options.oauth = server
    }
    options.extraMovies = extraMovies
    options.posterBytes = posterBytes
    options.ratings = SampleServing.Ratings(conflicts: Set(conflictMovies))
    let name = "\(CommandLineApp.current.app.name) serve"
    let folder = (fixtures ?? Self.appFixtures).map {
      URL(
        fileURLWithPath: $0,
        relativeTo: CommandLineApp.current.directory)
    }
    // A folder that cannot be served is a mistake in the command line: 64, before listening.
    let routes = try folder.map { folder in
      do { return try SampleServing.fixtures(folder) } catch {
        throw UsageError("\(name): \(error)")
      }
    }
    let server: SampleServing.Server
    do {
      server = try await SampleServing.start(
        options: options, routes: routes, host: host, port: UInt16(port),
        warn: { Terminal.warn("\(name): \($0)") })
    } catch {
      throw ServeError(description: "\(name): \(error)")
    }
    let what =
      folder.map {
        "\(server.responder.patterns.count) fixtures from \($0.standardizedFileURL.path)"
      }
      ?? "the sample API"
    try Terminal.print("Serving \(what) at \(server.baseURL.absoluteString) (Ctrl-C stops it)")
    await Self.untilSignalled()
    let responder = server.responder
    await server.stop()
    Terminal.error(
      "\(name): answered \(responder.totalRequests) requests, \(responder.requests(to: "auth"))"
        + " to auth (\(responder.tokensIssued) tokens issued), at most \(responder.peakConcurrency) at once;"
        + " \(responder.expiredTokensRefused) expired tokens refused;"
        + " \(options.ratings.appliedCount) ratings applied")
  }

  /// Returns when SIGINT or SIGTERM arrives.
  static func untilSignalled() async {
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let queue = DispatchQueue(label: "kernel.serve.signals")
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let once = Once(continuation)
      let sources = [SIGINT, SIGTERM].map {
        DispatchSource.makeSignalSource(signal: $0, queue: queue)
      }
      for source in sources {
        source.setEventHandler { once.resume() }
        source.resume()
      }
      once.keep(sources)
    }
  }
}

/// The server could not start (the port is in use or privileged): exit 69.
struct ServeError: Error, ClassifiedError, CustomStringConvertible {
  let description: String
  var failure: ServiceFailure { .unavailable }
}

/// Resumes a continuation once, whichever signal comes first; keeps the signal sources alive.
private final class Once: @unchecked Sendable {
  // Guarded by `lock`.
  private let lock = NSLock()
  private var continuation: CheckedContinuation<Void, Never>?
  private var sources: [any DispatchSourceSignal] = []

  init(_ continuation: CheckedContinuation<Void, Never>) { self.continuation = continuation }

  func keep(_ sources: [any DispatchSourceSignal]) { lock.withLock { self.sources = sources } }

  func resume() {
    let pending = lock.withLock { () -> CheckedContinuation<Void, Never>? in
      defer { continuation = nil }
      return continuation
    }
    pending?.resume()
  }
}
