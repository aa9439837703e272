import Api
import Composition
import Domain
import Foundation
import Layers

extension Answer {
  /// What a JSON reply says of where it came from: `origin`; for an answer from the store
  /// `ageSeconds`, what the footer says as "3 min old" (none for an age no whole number holds,
  /// as another program may have written); and `complete: true` for a local query's answer
  /// over every entity there is.
  public var fields: [String: JSONValue] {
    var fields: [String: JSONValue] = ["origin": .string(origin.rawValue)]
    if origin != .network, let seconds = Int(exactly: age.rounded(.down)) {
      fields["ageSeconds"] = .integer(seconds)
    }
    if isComplete { fields["complete"] = .boolean(true) }
    return fields
  }

  /// "1 book from cache, 3 min old", "2 books from the api in 12 ms", from both, or from a
  /// cached copy with changes not yet sent.
  public func footer(_ what: String) -> String {
    let milliseconds = (elapsed ?? .zero).wholeMilliseconds
    let age = origin == .network ? "new" : Reply.age(age)
    switch origin {
    case .cache: return "\(what) from cache, \(age)"
    case .local where isComplete:
      return "\(what) found among those stored, all there are as of the last complete list or sync,"
        + " \(age)"
    case .local:
      return "\(what) found among those stored (a local query: the api may know more), \(age)"
    case .pending:
      return "\(what) from cache, \(age), with changes not yet sent (outbox list shows them)"
    case .mixed: return "\(what) from the api and the cache (oldest \(age)), in \(milliseconds) ms"
    case .network: return "\(what) from the api in \(milliseconds) ms"
    }
  }
}

extension Invocation {
  /// `call` written through the profile's stack for `service` (`ServiceStack.write(_:)`), as
  /// `answered` runs a read: the writes the outbox keeps that are due are sent first, so this
  /// one goes behind them.
  ///
  /// ```swift
  /// switch try await invocation.write(.borrow(book: 7), to: "books") { … }
  /// ```
  public func write<Value: Sendable>(_ call: ServiceCall<Value>, to service: String)
    async throws -> Written<Value>
  {
    try await answered { composed in
      Answer(value: try await composed.stack(service).write(call), origin: .network)
    }.value
  }

  /// The one way a command reaches the profile's services, reads and writes alike: sends the
  /// writes the outbox keeps that are due (a new write goes behind them), runs `body` with the
  /// profile's graph and returns its answer (a stack's, or several gathered: `Answer.gathered`),
  /// with how long it took (`Answer.elapsed`). Before returning (or throwing) it waits, bounded
  /// by `timeouts.resourceSeconds`, for refreshes a stale-while-revalidate cache started behind
  /// its answers, so they are stored before the process ends.
  ///
  /// ```swift
  /// let shelf = try await invocation.answered { try await $0.stack("books").answer(.shelf) }
  /// ```
  public func answered<Value: Sendable>(
    _ body: @escaping @Sendable (Composed) async throws -> Answer<Value>
  ) async throws -> Answer<Value> {
    let composed = try services()
    await settleKeptWrites(composed)
    Phases.mark("service")
    let clock = ContinuousClock()
    let start = clock.now
    defer {
      // Only when it is shown: the peak is read from /proc.
      if verbose {
        let elapsed = (clock.now - start).wholeMilliseconds
        runtime.log("done in \(elapsed) ms; peak memory \(Terminal.peakMemoryMegabytes) MB")
      }
    }
    let answer: Answer<Value>
    do {
      answer = try await composed.makeCurrent { try await body(composed) }
    } catch {
      await settle(composed)
      throw await StoredElsewhere.find(error, composed) ?? error
    }
    await settle(composed)
    Phases.mark("answer")
    var timed = answer
    timed.elapsed = clock.now - start
    return timed
  }

  /// `call` answered by the profile's stack for `service` (`Catalog.service(_:)`), as `answered`
  /// runs it: due writes sent first, the answer timed.
  ///
  /// ```swift
  /// let book = try await invocation.answer(.book(id: 1), from: "books")
  /// ```
  public func answer<Value: Sendable>(
    _ call: ServiceCall<Value>, from service: String,
    early: (@Sendable (Answer<Value>) -> Void)? = nil
  ) async throws -> Answer<Value> {
    try await answered { composed in try await composed.stack(service).answer(call, early: early) }
  }

  /// Answers `call` by the profile's stack for `service` (`answer`) and prints it (`show`): the
  /// whole `run()` of a command that shows a call.
  ///
  /// ```swift
  /// try await Invocation(global).show(.shelf, from: "books", as: "books", one: "book")
  /// ```
  public func show<Element: Encodable & Sendable>(
    _ call: ServiceCall<[Element]>, from service: String, as key: String, one: String
  ) async throws {
    try show(try await answer(call, from: service), as: key, one: one)
  }

  /// Answers `call`, a call of one value, and prints it as a list of one.
  public func show<Value: Encodable & Sendable>(
    _ call: ServiceCall<Value>, from service: String, as key: String, one: String
  ) async throws {
    try show(try await answer(call, from: service).map { [$0] }, as: key, one: one)
  }

  /// Writes `call` through the profile's stack for `service` (`write(_:to:)`) and prints what
  /// became of it: the api's answer as a list of one, `queued: …` when the stack's outbox kept
  /// it (`sayQueued(_:)`), or that the api took it but its answer could not be read.
  ///
  /// ```swift
  /// let add = try ServiceCall<Book>.add(title: "Emma", author: "Jane Austen")
  /// try await Invocation(global).show(writing: add, to: "books", as: "books", one: "book")
  /// ```
  public func show<Value: Encodable & Sendable>(
    writing call: ServiceCall<Value>, to service: String, as key: String, one: String
  ) async throws {
    let start = ContinuousClock.now
    switch try await write(call, to: service) {
    case .sent(let value):
      var answer = Answer(value: [value], origin: .network)
      answer.elapsed = ContinuousClock.now - start
      try show(answer, as: key, one: one)
    case .queued(let write): try sayQueued(write)
    case .applied(let problem):
      try Reply.say(
        self,
        "\(call.summary.openingASentence) was taken by the api, but its answer could not be read"
          + " (\(problem)); it is applied, so do not send it again.",
        ["state": "applied", "problem": problem])
    }
  }

  /// Says that `write` was kept, on stdout: `queued: a loan of book 7 is kept, to be sent to
  /// http://127.0.0.1:8080 by …`, or as JSON `{"state": "queued", "write": {…}}`.
  public func sayQueued(_ write: PendingWrite) throws {
    if format == .json {
      try Terminal.printExact(
        try Reply.json(["state": "queued", "write": OutboxCommand.fields(write, now: Date())]))
    } else {
      try Terminal.print(
        TerminalText.escaped(
          "queued: \(write.summary) is kept, to be sent to \(write.origin) by outbox sync or the"
            + " next run that reaches it; outbox list shows it as write \(write.id).",
          keepingNewlines: false))
    }
  }

  /// Before the command's own calls: makes the stored copies show what the kept writes make of
  /// them (`Composed.reconcileEdits`), then sends the writes the outbox keeps that are due, when
  /// the profile reaches the api and keeps an outbox; says on stderr what it undid, redid and sent,
  /// and warns, never fails, when the sync could not: the command goes on. The sync takes at most
  /// `syncSlice` of the call deadline: 2,000 kept writes must not hold up the read the user
  /// asked for (what is left waits for `outbox sync` or the next run; a write cut off mid-send
  /// is sent again with its idempotency key).
  func settleKeptWrites(_ composed: Composed) async {
    // A cache that cannot be read is said by the command that reads it, once: not here too.
    let (undone, redone) = (try? await composed.reconcileEdits()) ?? ([], [])
    let names = { (keys: [String]) in
      keys.map { $0.split(separator: " ").last.map(String.init) ?? $0 }.joined(separator: ", ")
    }
    if !undone.isEmpty {
      Terminal.warn(
        "\(undone.count) cached \(undone.count == 1 ? "copy showed an edit" : "copies showed edits")"
          + " no kept write stands behind (the outbox file was removed or replaced): "
          + names(undone) + " now \(undone.count == 1 ? "shows" : "show") the api's copy.")
    }
    if !redone.isEmpty {
      Terminal.warn(
        "\(redone.count) cached \(redone.count == 1 ? "copy" : "copies") did not show kept writes"
          + " (a run was stopped while keeping one): " + names(redone) + " now"
          + " \(redone.count == 1 ? "shows" : "show") them.")
    }
    // Nothing to send: no deadline's timer and task either (a tenth of a millisecond of every
    // offline run).
    guard composed.mayHaveDueWrites else { return }
    let slice = Self.syncSlice(callSeconds: config.timeouts.callSeconds)
    let outcome = await withTaskGroup(of: SyncOutcome.self) { group in
      group.addTask {
        do { return .done(try await composed.syncDueWrites()) } catch {
          return .failed("\(error)")
        }
      }
      group.addTask {
        try? await Task.sleep(for: slice)
        return .cutOff
      }
      let first = await group.next() ?? .cutOff
      group.cancelAll()
      return first
    }
    switch outcome {
    case .done(let report?):
      let kept = report.conflicts.count + report.rejected.count
      guard report.sent.count + kept > 0 else { return }
      Terminal.error(
        "Sent \(report.sent.count) of \(report.tried) kept writes"
          + (kept > 0 ? "; \(kept) need you: see outbox list." : "."))
    case .done(nil): return
    case .failed(let error): Terminal.warn("The outbox could not be synced: \(error)")
    case .cutOff:
      Terminal.warn(
        "The outbox sync was cut off after \(slice) so as not to hold up this command; outbox"
          + " sync sends the rest.")
    }
  }

  /// How long a run's sync of kept writes may take before its own calls: a tenth of the call
  /// deadline, from 0.1 to 2 seconds.
  static func syncSlice(callSeconds: Int) -> Duration {
    .milliseconds(min(2_000, max(100, callSeconds * 100)))
  }

  /// How the sync before a command ended (an enum, not a `Result` in a task group: Swift 6.3.1
  /// miscompiles some of those under -O, ../shared/platform).
  private enum SyncOutcome: Sendable {
    case done(SyncReport?)
    case failed(String)
    case cutOff
  }

  /// Waits for the cache's background refreshes, for at most the resource timeout.
  private func settle(_ composed: Composed) async {
    let pending = composed.pendingWork
    guard pending > 0 else { return }
    let limit = config.timeouts.resourceSeconds
    runtime.log("waiting for \(pending) cache refresh(es) to be stored")
    if await !composed.settle(within: .seconds(limit)) {
      Terminal.warn(
        "The cache's refresh did not finish within \(limit) s (timeouts.resourceSeconds); the stored copy was kept."
      )
    }
  }
}

extension Invocation {
  /// Prints a fetched list as a command shows it. As JSON, one object holding the list under
  /// `key` and its `origin` (`{"books":[…],"origin":"cache"}`); as text, a line per element
  /// (escaped: what came from outside cannot drive the terminal), then the footer saying where
  /// they came from (`2 books from cache, 3 min old`), `one` naming a single element (`book`).
  /// An element's line is `line` of it: its description unless the command says otherwise.
  ///
  /// ```swift
  /// try invocation.show(shelf, as: "books", one: "book") { "\($0.id)  \($0.title)" }
  /// ```
  public func show<Element: Encodable & Sendable>(
    _ fetched: Answer<[Element]>, as key: String, one: String,
    line: (Element) -> String = { "\($0)" }
  ) throws {
    guard format == .text else {
      return try Reply.printJSON(list: key, fetched.value, fields: fetched.fields)
    }
    for element in fetched.value {
      try Terminal.print(TerminalText.escaped(line(element), keepingNewlines: false))
    }
    let count = fetched.value.count
    try Terminal.print(fetched.footer(Reply.count(count, one, plural: key)))
  }
}

/// A failure to answer under a profile that does not reach the api (offline), when the cache
/// holds nothing of the api in use but does hold another api's answers, which a run with
/// `--base-url` or `--environment` stored: the sentence says so and names the option that
/// chooses it, rather than leaving "nothing is cached" unexplained. The exit code is the
/// cause's.
struct StoredElsewhere: Error, ClassifiedError, CustomStringConvertible {
  /// What failed, the api in use (`local (http://127.0.0.1:8080/api/)`), and the option that
  /// chooses each api the cache holds answers of (`--environment sample`).
  let cause: any Error, inUse: String, options: [String]
  var failure: ServiceFailure { ServiceFailure.of(cause) ?? .unreachable }

  var description: String {
    let others =
      options.count == 1
      ? "another api's answers (\(options[0]) chooses it)"
      : "other apis' answers (\(options.joined(separator: " or ")) chooses one)"
    return Failure.sentence(cause).dropLast()
      + "; the cache holds nothing of the api in use, \(inUse), only \(others)."
  }

  /// `error` said this way when it is unreachable, the profile does not reach the api, and the
  /// cache holds only other apis' answers; else nil (and nil when the cache cannot tell).
  static func find(_ error: any Error, _ composed: Composed) async -> StoredElsewhere? {
    guard !composed.reachesApi, ServiceFailure.of(error) == .unreachable,
      let origins = try? await composed.cacheStatistics()?.entriesByOrigin,
      let environment = try? composed.container.resolve((any ApiContext).self).environment,
      origins[environment.storeRoot, default: 0] == 0
    else { return nil }
    let named = (try? composed.api().environments) ?? []
    let options = origins.filter { !$0.key.isEmpty && $0.value > 0 }.keys.sorted().map { root in
      named.first { $0.origin == root }.map { "--environment \($0.name)" } ?? "--base-url \(root)"
    }
    guard !options.isEmpty else { return nil }
    return StoredElsewhere(
      cause: error, inUse: "\(environment.name) (\(environment.displayURL))", options: options)
  }
}
