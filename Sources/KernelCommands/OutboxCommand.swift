import ArgumentParser
import Composition
import Domain
import Foundation
import Layers

/// `kernel outbox …`: the writes kept in the data dir until the api takes them.
struct OutboxCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "outbox",
    abstract:
      "Writes kept until the api takes them: list (the default), sync, retry, resolve or drop them.",
    discussion: """
      A stack with an outbox over the api ([..., outbox, api]) sends each write at once and \
      keeps it here when the api cannot be reached (or answers 5xx, 408, 429); over the store \
      ([outbox, store]) it keeps every write. Kept writes \
      are sent in the order they were made, each with its own Idempotency-Key, by `outbox \
      sync` and at the start of every run of a profile that reaches the api. A write the api \
      answers 409 (or 412) is kept as a conflict, one it refuses (another 4xx) as rejected: \
      `outbox retry ID` sends it again as it is, `outbox resolve ID` sends it again over the \
      server's version (If-Match: the ETag the conflict answered with), `outbox drop ID` \
      forgets it. `outbox sync` \
      exits 0 only when nothing is left unresolved: 77 when the api refused the credential, \
      69 when writes still wait for the api, 65 when some need you.
      """,
    subcommands: [List.self, Sync.self, Retry.self, Resolve.self, Drop.self],
    defaultSubcommand: List.self)

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list",
      abstract: "Every kept write: id, call, age, tries, state and last error.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let writes = try await OutboxCommand.writes(invocation)
      let now = Date()
      if invocation.format == .json {
        try Terminal.printExact(
          try Reply.json(["writes": writes.map { OutboxCommand.fields($0, now: now) }]))
        return
      }
      guard !writes.isEmpty else { return try Terminal.print("The outbox is empty.") }
      try Terminal.print(
        Reply.table(
          ["id", "call", "age", "tries", "state", "last error"],
          writes.map { write in
            [
              "\(write.id)",
              // A summary that opens with the call's name (a generated operation's) says it once.
              TerminalText.escaped(
                write.summary.hasPrefix(write.name + " ")
                  ? write.summary : "\(write.name): \(write.summary)", keepingNewlines: false),
              Reply.age(now.timeIntervalSince(write.createdAt)), "\(write.tries)",
              write.state.rawValue,
              TerminalText.escaped(write.lastError ?? "", keepingNewlines: false),
            ]
          }, rightAligned: [0, 3]))
    }
  }

  struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "sync",
      abstract: "Send the kept writes of the environment in use now, in order, each once.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      try await OutboxCommand.sync(invocation)
    }
  }

  struct Retry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "retry",
      abstract: "Send a kept write again as it is (a conflict, a rejection, or one waiting).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The write's id, as outbox list shows it.") var id: Int64

    func run() async throws {
      let invocation = try Invocation(global)
      let composed = try invocation.services()
      guard try await composed.retryWrite(id) != nil else {
        throw OutboxCommand.noWrite(id, invocation)
      }
      try await OutboxCommand.sync(invocation, composed)
    }
  }

  struct Resolve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "resolve",
      abstract: "Send a write in conflict again over the server's version, then sync.",
      discussion: """
        The write keeps its request; its If-Match becomes the ETag the server answered the \
        conflict with, and it gets a new Idempotency-Key. It is sent in its place in its \
        order, by the sync that follows.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The write's id, as outbox list shows it.") var id: Int64

    func run() async throws {
      let invocation = try Invocation(global)
      let composed = try invocation.services()
      guard try await composed.resolveWrite(id) != nil else {
        throw OutboxCommand.noWrite(id, invocation)
      }
      try await OutboxCommand.sync(invocation, composed)
    }
  }

  struct Drop: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "drop", abstract: "Forget a kept write: it will never be sent.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The write's id, as outbox list shows it.") var id: Int64

    func run() async throws {
      let invocation = try Invocation(global)
      guard let dropped = try await invocation.services().dropWrite(id) else {
        throw OutboxCommand.noWrite(id, invocation)
      }
      if invocation.format == .json {
        try Terminal.printExact(try Reply.json(["dropped": fields(dropped, now: Date())]))
      } else {
        try Terminal.print("Dropped write \(id) (\(dropped.summary), \(dropped.state.rawValue)).")
      }
    }
  }

  /// The kept writes, or a usage error when no stack of the profile keeps an outbox.
  static func writes(_ invocation: Invocation) async throws -> [PendingWrite] {
    guard let writes = try await invocation.services().keptWrites() else {
      throw UsageError(
        "No stack of the \(invocation.config.profile) profile names outbox in"
          + " \(invocation.config.file); choose a profile whose stack keeps one ([..., outbox, api])."
      )
    }
    return writes
  }

  /// How many kept writes are in each state, from the first profile (the chosen one first)
  /// whose write stacks keep an outbox; nil when none does. Creates no file.
  static func tally(_ invocation: Invocation, options: GlobalOptions) async throws
    -> [WriteState: Int]?
  {
    let chosen = invocation.config.profile
    for profile in [chosen] + invocation.document.profileNames.sorted().filter({ $0 != chosen }) {
      let composed = try Invocation(options, profile: profile).inspect()
      guard let writes = try await composed.keptWrites() else { continue }
      return Dictionary(grouping: writes, by: \.state).mapValues(\.count)
    }
    return nil
  }

  /// `2 pending, 1 in conflict, 0 rejected`.
  static func said(_ tally: [WriteState: Int]) -> String {
    "\(tally[.pending] ?? 0) pending, \(tally[.conflict] ?? 0) in conflict,"
      + " \(tally[.rejected] ?? 0) rejected"
      + ((tally[.damaged] ?? 0) > 0 ? ", \(tally[.damaged] ?? 0) damaged" : "")
  }

  /// Sends what is kept, forced, with a line per write on stderr as it goes, then a summary.
  static func sync(_ invocation: Invocation, _ given: Composed? = nil) async throws {
    let composed = try given ?? invocation.services()
    let progress: @Sendable (PendingWrite, WriteOutcome) -> Void = { write, outcome in
      Terminal.error(
        TerminalText.escaped(
          "write \(write.id) (\(write.summary)): \(describe(outcome))", keepingNewlines: false))
    }
    guard let report = try await composed.syncOutbox(force: true, progress: progress) else {
      _ = try await writes(invocation)
      return
    }
    let left = try await composed.keptWrites() ?? []
    let unresolved = unresolvedKinds(left, report)
    if invocation.format == .json {
      var summary: [String: any Sendable] = [
        "sent": report.sent.count, "conflicts": report.conflicts.count,
        "rejected": report.rejected.count, "failed": report.failed.count,
        "writes": left.map { fields($0, now: Date()) },
        "unresolved": unresolved.map(\.kind),
      ]
      summary["stoppedBecause"] = report.stoppedBecause
      try Terminal.printExact(try Reply.json(summary))
    } else {
      var line =
        "Sent \(Reply.count(report.sent.count, "write")); \(report.conflicts.count) in conflict,"
        + " \(report.rejected.count) rejected; \(Reply.count(left.count, "write")) kept."
      if let reason = report.stoppedBecause { line += " Stopped: \(reason)" }
      try Terminal.print(line)
    }
    for kind in unresolved { Terminal.error(kind.line) }
    let elsewhere = Set(left.lazy.map(\.origin).filter { $0 != report.origin }).sorted()
    if !elsewhere.isEmpty {
      let count = left.count { $0.origin != report.origin }
      Terminal.error(
        "\(Reply.count(count, "write")) kept for another environment"
          + " (\(elsewhere.joined(separator: ", "))) \(count == 1 ? "was" : "were") not sent:"
          + " outbox sync in that environment (--environment, --base-url) sends"
          + " \(count == 1 ? "it" : "them").")
    }
    // 0 only when nothing is left unresolved: a script can tell a sync that did its work.
    if let worst = unresolved.first { throw ExitCode(Failure.code(worst.failure)) }
  }

  /// What is left unresolved after a sync, one kind a line, the one whose exit code a run
  /// ends with first: a refused credential (77), writes waiting for the api (69), writes that
  /// need the user (65).
  static func unresolvedKinds(_ left: [PendingWrite], _ report: SyncReport) -> [(
    kind: String, failure: ServiceFailure, line: String
  )] {
    let tally = Dictionary(grouping: left, by: \.state).mapValues(\.count)
    var kinds: [(kind: String, failure: ServiceFailure, line: String)] = []
    if report.stoppedFor == .authentication {
      kinds.append(
        (
          "authentication", .authentication,
          "The api refused the credential; log in (auth login), then outbox sync."
        ))
    }
    // Writes this sync tried and could not send (a write another sync is sending is not
    // this one's to report).
    if report.stoppedFor != .authentication, !report.failed.isEmpty {
      // This environment's: another's wait for a sync in that one.
      let pending = max(
        report.failed.count, left.count { $0.state == .pending && $0.origin == report.origin })
      kinds.append(
        (
          "pending", .unreachable,
          "\(Reply.count(pending, "write")) still \(pending == 1 ? "waits" : "wait") for the api;"
            + " outbox sync sends \(pending == 1 ? "it" : "them") when it answers."
        ))
    }
    let needYou = (tally[.conflict] ?? 0) + (tally[.rejected] ?? 0) + (tally[.damaged] ?? 0)
    if needYou > 0 {
      kinds.append(
        (
          "needsYou", .conflict,
          "\(Reply.count(needYou, "write")) in conflict, rejected or damaged \(needYou == 1 ? "needs" : "need")"
            + " you: outbox list shows \(needYou == 1 ? "it" : "them"); retry, resolve or drop"
            + " \(needYou == 1 ? "it" : "each")."
        ))
    }
    return kinds
  }

  static func describe(_ outcome: WriteOutcome) -> String {
    switch outcome {
    case .sent: "sent"
    case .pending(let error, _): "kept: \(error)"
    case .conflict(let error, _, _): "conflict: \(error)"
    case .rejected(let error): "rejected: \(error)"
    }
  }

  /// A write as `--format json` shows it.
  static func fields(_ write: PendingWrite, now: Date) -> [String: any Sendable] {
    var fields: [String: any Sendable] = [
      "id": write.id, "name": write.name, "summary": write.summary, "origin": write.origin,
      "orderingKey": write.orderingKey, "idempotencyKey": write.idempotencyKey,
      "state": write.state.rawValue, "tries": write.tries,
      "ageSeconds": Reply.wholeSeconds(now.timeIntervalSince(write.createdAt)),
    ]
    fields["lastError"] = write.lastError
    fields["ifMatch"] = write.ifMatch
    fields["serverETag"] = write.serverETag
    fields["serverBody"] = write.serverBody.map { String(decoding: $0, as: UTF8.self) }
    return fields
  }

  static func noWrite(_ id: Int64, _ invocation: Invocation) -> UsageError {
    UsageError("The outbox keeps no write \(id); outbox list shows the ids it keeps.")
  }
}
