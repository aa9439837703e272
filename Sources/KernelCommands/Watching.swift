import ArgumentParser
import Composition
import Dispatch
import Domain
import Foundation
import Layers

/// `--watch`: a read command prints its answer, then again each time the stored data it is made
/// of changes (this process's refresh, or another process's write, sync or `cache clear`),
/// until interrupted.
public struct WatchOption: ParsableArguments, Sendable {
  /// `--watch`: keep printing as the answer changes.
  @Flag(
    help: """
      Print the answer again each time what it is made of changes (another run's write, \
      sync or cache clear), until Ctrl-C: in place on a terminal, else one per change \
      (json: one object per line).
      """)
  public var watch = false

  public init() {}
}

/// A watch that cannot go on: what it watched is gone (the store's file was deleted or
/// replaced). The command ends with its sentence and the exit code of its kind.
struct WatchEnded: ClassifiedError, CustomStringConvertible {
  let description: String
  let failure: ServiceFailure
}

extension Invocation {
  /// Watches `call` on the profile's stack for `service` (`ServiceStack.watch`, refreshed from
  /// the api once where the stack has one), and hands `show` each element (`first` for the
  /// first; never `.ended`: that is thrown), clearing a terminal's screen before each after the
  /// first when the output is text, where nothing stored yet is said for it, naming the call
  /// (`Nothing is stored for movie 4 yet; watching.`), and `show` hears only of it in JSON;
  /// until interrupted: Ctrl-C (or SIGTERM) exits 0. A watch that cannot go on (the store's file
  /// deleted or replaced) throws its one sentence. A stack that stores nothing (an api-only
  /// profile) cannot be watched: a usage error (exit 64) naming the profile.
  public func watch<Value: Sendable & Equatable>(
    _ call: ServiceCall<Value>, from service: String,
    show: @escaping @Sendable (_ element: Watched<Value>, _ first: Bool) throws -> Void
  ) async throws {
    let composed = try services()
    await settleKeptWrites(composed)
    let stack = try composed.stack(service)
    guard let elements = await composed.makeCurrent({ stack.watch(call) }) else {
      throw UsageError(
        "--watch needs a profile that stores answers, and the \(config.profile) profile's stack for"
          + " \(service) stores nothing to watch; run it with --profile layered or offline, or"
          + " without --watch.")
    }
    let interrupted = Self.exitOnInterrupt()
    defer {
      for source in interrupted { source.cancel() }
    }
    let redraws = format == .text && isatty(STDOUT_FILENO) == 1
    var first = true
    for await element in elements {
      if case .ended(let failure) = element {
        throw WatchEnded(description: failure.description, failure: failure.failure ?? .unavailable)
      }
      if redraws && !first { try Terminal.printPart("\u{1B}[H\u{1B}[2J") }
      if case .nothingStored = element, format != .json {
        try Terminal.print("Nothing is stored for \(call.summary) yet; watching.")
      } else {
        try show(element, first)
      }
      first = false
    }
  }

  /// Ctrl-C and SIGTERM end a watch (and `sync --watch`): the process exits 0 with its output
  /// written. A store's transaction under way then is rolled back by SQLite, as after a kill.
  static func exitOnInterrupt() -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number)
      source.setEventHandler { exit(0) }
      source.resume()
      return source
    }
  }
}
