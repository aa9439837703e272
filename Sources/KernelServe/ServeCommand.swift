import ArgumentParser
import Dispatch
import Domain
import Foundation
// An app that serves imports this in place of KernelCommands: the command front, with `serve`.
@_exported import KernelCommands
import SampleApi

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// An app's own sample api, which `serve` answers when it serves no fixture folder: the options
/// it adds to `serve` and the routes they make; `kernel`'s example has one too:
///
/// ```swift
/// struct SampleBooks: SampleApiOptions {
///   static let title = "the sample books API"
///   @Option(help: "Answer every book with 409.") var conflicts = false
///   func served(basePath: String) -> FixtureRoutes { .books(basePath, conflicts) }
/// }
/// let line = CommandLineApp(.books, abstract: "…").serving(SampleBooks.self)
/// ```
public protocol SampleApiOptions: ParsableArguments {
  /// How `serve --help` names it: `the sample books API`.
  static var title: String { get }
  /// Refuses options that only this api takes when `serve` answers a fixture folder instead.
  func check(servingFixtures: Bool) throws
  /// The routes to answer under `basePath`, with what to say of them when `serve` stops
  /// (`FixtureRoutes.summary`).
  func served(basePath: String) throws -> FixtureRoutes
}

extension SampleApiOptions {
  public func check(servingFixtures: Bool) throws {}
}

/// The sample api of an app that has none: `serve` answers fixture folders only, and without
/// one says so in a usage error (exit 64) before it listens.
struct NoSampleApi: SampleApiOptions {
  /// How `serve --help` would name it; its help names no sample api.
  static let title = "no sample API"
  /// Refuses to serve without a fixture folder: there is nothing else to serve.
  func check(servingFixtures: Bool) throws {
    guard servingFixtures else { throw Self.nothingToServe }
  }
  /// Never reached after `check(servingFixtures:)`; the same usage error if it is.
  func served(basePath: String) throws -> FixtureRoutes { throw Self.nothingToServe }

  private static var nothingToServe: ValidationError {
    ValidationError(
      "\(CommandLineApp.current.app.name) has no sample API to serve: give --fixtures DIR, a"
        + " folder of JSON files.")
  }
}

/// `serve`: an app's fixture folder, or its own sample api `Api`, over HTTP on loopback, until
/// SIGINT or SIGTERM. Its help speaks of the app's own fixtures when the app has some
/// (`CommandLineApp.fixtures`), and of its sample api when it has one. An app's command line
/// has it when it asks for it (`serving(fixtures:)` or `serving(_:fixtures:)`), and only then
/// links the server (FlyingSocks).
struct ServeCommand<Api: SampleApiOptions>: AsyncParsableCommand {
  /// The app's default fixture folder, if it names one.
  static var appFixtures: String? { CommandLineApp.current.fixtures }

  /// `serve`, its help naming what it serves.
  static var configuration: CommandConfiguration {
    let app = CommandLineApp.current.app.name
    let sample = Api.self == NoSampleApi.self ? "" : " (or \(Api.title))"
    let what =
      appFixtures.map { "the fixtures of \(app) (\($0)), or another folder of JSON fixtures," }
      ?? "a folder of JSON fixtures\(sample)"
    return CommandConfiguration(
      commandName: "serve",
      abstract: "Serve \(what) on loopback, with latency and faults.",
      discussion: discussion)
  }

  static var discussion: String {
    """
    With --fixtures DIR, DIR/api/books/7.json answers GET /api/books/7, and a file or folder \
    named {id} answers any one segment (DIR/api/books/{id}.json); a file name may end in a \
    query, one file per page (DIR/api/books?page=2.json answers GET /api/books?page=2); only \
    .json files are served, each checked to hold JSON first. GET /api/auth hands out tokens unless a file answers it; \
    with --oauth, POST /api/oauth/token is an OAuth 2.0 token endpoint (client id kernel; the \
    password grant for user u with password pw, client credentials, refresh with rotation). \
    An unknown path is a 404 naming it. Latency, faults and --require-auth apply to every route.

    Prints its base URL on the first line of stdout (with --port 0, the port the system \
    chose), and on stop a summary on stderr: requests answered, calls to auth and tokens \
    issued, the most answered at once, how many expired tokens were refused, and what the \
    app's sample api adds. With --format json, both are one JSON object a line on stdout: \
    {"baseURL": …, "serving": …}, then {"requests": …, "authRequests": …, "tokensIssued": …, \
    "mostAtOnce": …, "expiredTokensRefused": …, "sample": …}.
    """
  }

  @Option(
    help: ArgumentHelp(
      appFixtures.map { "A folder of JSON files to serve instead of \($0)." }
        ?? "A folder of JSON files to serve\(Api.self == NoSampleApi.self ? "" : " instead of \(Api.title)").",
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
  @OptionGroup(title: "Sample api options") var api: Api
  /// `--format json`: what it serves and, on stop, its summary, each one JSON object a line
  /// (said in its discussion; the other global options mean nothing to it, so none is listed).
  @OptionGroup(visibility: .hidden) var global: GlobalOptions

  /// Refuses a host that is not loopback and numbers out of range, in one sentence (64).
  func validate() throws {
    guard Loopback.isLoopback(host) else {
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
    if let tokenTTL { try Self.check("--token-ttl", tokenTTL, in: 1...86_400) }
    try api.check(servingFixtures: (fixtures ?? Self.appFixtures) != nil)
  }

  /// Serves until SIGINT or SIGTERM, then prints the summary: on stderr, or with `--format json`
  /// as a second JSON line on stdout.
  func run() async throws {
    let json = try Invocation.format(global, allowed: [.text, .json]) == .json
    var options = SampleApiResponder.Options()
    options.latency = .milliseconds(latency)
    options.failureRate = failRate
    options.failFirst = failFirst
    options.requireAuth = requireAuth
    options.tokenLifetime = tokenTTL.map { .seconds($0) }
    if oauth {
      var server = OAuthServer()
      if let tokenTTL { server.accessTokenLifetime = .seconds(tokenTTL) }
      options.oauth = server
    }
    let name = "\(CommandLineApp.current.app.name) serve"
    let folder = (fixtures ?? Self.appFixtures).map {
      URL(
        fileURLWithPath: $0,
        relativeTo: CommandLineApp.current.directory)
    }
    // A folder that cannot be served is a mistake in the command line: 64, before listening.
    let served = try folder.map { folder in
      do { return try FixtureRoutes.folder(folder) } catch {
        // The app's own folder is found from where the command runs: say so.
        var said = "\(error)"
        guard fixtures == nil, said.hasSuffix(".") else { throw UsageError("\(name): \(said)") }
        said.removeLast()
        throw UsageError(
          "\(name): \(said) (the app's own fixtures, found from the working directory: run it"
            + " where \(folder.lastPathComponent) is, or name a folder with --fixtures DIR).")
      }
    }
    let answered = try served ?? api.served(basePath: options.basePath)
    let server: FixtureServer
    do {
      server = try await FixtureServer.start(
        options: options, routes: answered, host: host, port: UInt16(port),
        warn: { Terminal.warn("\(name): \($0)") })
    } catch {
      throw ServeError(description: "\(name): \(error)")
    }
    let what =
      folder.map {
        "\(Reply.count(server.responder.patterns.count, "fixture")) from"
          + " \($0.standardizedFileURL.path)"
      }
      ?? Api.title
    let url = server.baseURL.absoluteString
    try Terminal.print(
      json
        ? try Reply.json(["baseURL": url, "serving": what])
        : "Serving \(what) at \(url) (Ctrl-C stops it)")
    await untilSignalled()
    let responder = server.responder
    await server.stop()
    let (requests, auth) = (responder.totalRequests, responder.requests(to: "auth"))
    let (issued, refused) = (responder.tokensIssued, responder.expiredTokensRefused)
    if json {
      var summary: [String: any Sendable] = [
        "requests": requests, "authRequests": auth, "tokensIssued": issued,
        "mostAtOnce": responder.peakConcurrency, "expiredTokensRefused": refused,
      ]
      summary["sample"] = answered.summary()
      try Terminal.print(try Reply.json(summary))
      return
    }
    Terminal.error(
      "\(name): answered \(Reply.count(requests, "request")), \(auth) to auth"
        + " (\(Reply.count(issued, "token")) issued), at most"
        + " \(responder.peakConcurrency) at once;"
        + " \(Reply.count(refused, "expired token")) refused"
        + (answered.summary().map { "; \($0)" } ?? ""))
  }
}

/// Returns when SIGINT or SIGTERM arrives.
private func untilSignalled() async {
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

extension CommandLineApp {
  /// This command line with Kernel's `serve` among Kernel's commands, answering the app's
  /// fixture folder `fixtures` (relative to the working directory; `--fixtures` names another),
  /// or, with none, the folder `--fixtures` names:
  ///
  /// ```swift
  /// CommandLineApp(.books, abstract: "…", commands: [Get.self]).serving(fixtures: "Fixtures")
  /// ```
  public func serving(fixtures: String? = nil) -> CommandLineApp {
    serving(NoSampleApi.self, fixtures: fixtures)
  }

  /// This command line with Kernel's `serve`, answering the app's own sample api `Api` (the
  /// options it adds to `serve` and the routes they make), or a fixture folder: `fixtures`, or
  /// the one `--fixtures` names.
  public func serving<Api: SampleApiOptions>(_ api: Api.Type, fixtures: String? = nil)
    -> CommandLineApp
  {
    var line = self
    line.serve = ServeCommand<Api>.self
    line.fixtures = fixtures
    return line
  }
}
