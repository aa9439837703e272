import ArgumentParser
import Composition
import Domain
import Foundation

/// `kernel cache …`: the SQLite cache in the data dir.
struct CacheCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cache", abstract: "What the cache holds (cache stats, the default), or empty it.",
    subcommands: [Stats.self, Clear.self], defaultSubcommand: Stats.self)

  struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "stats",
      abstract:
        "Answers stored (by each environment's origin), size and budget, oldest, newest; kept writes."
    )
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let composed = try invocation.inspect()
      guard let stats = try await composed.cacheStatistics() else {
        throw CacheCommand.noCache(invocation)
      }
      let older = composed.olderModelRows(in: stats)
      let environments = try invocation.api().environments
      let origins = stats.entriesByOrigin.sorted { $0.key < $1.key }.map { origin, count in
        let names = environments.filter { $0.origin == origin }.map(\.name)
        return (origin: origin, names: names, count: count)
      }
      let now = Date()
      // A damaged outbox is the outbox's problem, said in a line: the cache's numbers stand.
      var writes: [WriteState: Int]?
      var outboxProblem: String?
      do { writes = try await OutboxCommand.tally(invocation, options: global) } catch {
        outboxProblem = Failure.sentence(error)
      }
      if invocation.format == .json {
        var fields: [String: any Sendable] = [
          "file": stats.file ?? "", "bytes": stats.bytes, "entries": stats.entries,
          "maxBytes": stats.maxBytes,
          "origins": origins.map {
            ["origin": $0.origin, "environments": $0.names, "entries": $0.count]
              as [String: any Sendable]
          },
        ]
        fields["oldestAgeSeconds"] = stats.oldest.map {
          Reply.wholeSeconds(now.timeIntervalSince($0))
        }
        fields["newestAgeSeconds"] = stats.newest.map {
          Reply.wholeSeconds(now.timeIntervalSince($0))
        }
        fields["writes"] = writes.map { counts in
          Dictionary(
            uniqueKeysWithValues: WriteState.allCases.map { ($0.rawValue, counts[$0] ?? 0) })
        }
        fields["outboxProblem"] = outboxProblem
        fields["olderModelRows"] = older
        try Terminal.printExact(try Reply.json(fields))
        return
      }
      try Terminal.print("cache:   \(stats.file ?? "in memory")")
      let budget = stats.maxBytes.map { " of \(Reply.grouped(Int($0))) (cache.maxBytes)" } ?? ""
      try Terminal.print("size:    \(Reply.grouped(Int(stats.bytes))) bytes\(budget)")
      try Terminal.print("answers: \(stats.entries)")
      for (origin, names, count) in origins {
        let named = names.isEmpty ? "" : " (\(names.joined(separator: ", ")))"
        try Terminal.print("  \(origin.isEmpty ? "no origin" : origin)\(named): \(count)")
      }
      if let oldest = stats.oldest, let newest = stats.newest {
        try Terminal.print("oldest:  \(Reply.age(now.timeIntervalSince(oldest)))")
        try Terminal.print("newest:  \(Reply.age(now.timeIntervalSince(newest)))")
      }
      for line in CacheCommand.said(older) { try Terminal.print("older:   \(line)") }
      if let writes { try Terminal.print("writes:  \(OutboxCommand.said(writes)) (outbox list)") }
      if let outboxProblem { try Terminal.print("writes:  unknown: \(outboxProblem)") }
    }
  }

  /// "12 stored Movie rows are from an older model, with no migration: …", a line per type.
  static func said(_ older: [String: Int]) -> [String] {
    older.sorted { $0.key < $1.key }.map { type, count in
      "\(count) stored \(type) \(count == 1 ? "row is" : "rows are") from an older model, with no"
        + " migration: left out of answers offline, fetched anew online"
    }
  }

  /// "2 stored Movie rows do not read as Movie (damaged, or …)", a line per type.
  static func said(damaged: [String: Int]) -> [String] {
    damaged.sorted { $0.key < $1.key }.map { type, count in
      "\(count) stored \(type) \(count == 1 ? "row does" : "rows do") not read as \(type) (damaged,"
        + " or written by a model that changed without a new modelVersion): left out of answers"
        + " offline, fetched anew online"
    }
  }

  struct Clear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "clear",
      abstract: "Delete everything cached, or one environment's answers, in one transaction.",
      discussion: """
        An entity showing a change not yet sent (a kept write's edit) stays: it is yours until \
        the outbox sends the write, or outbox drop undoes it.
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(
      help: "An environment whose answers alone are deleted (those of its origin, every user's).")
    var environment: String?

    func run() async throws {
      let invocation = try Invocation(global)
      var origin: String?
      if let environment {
        let all = try invocation.api().environments
        guard let named = all.first(where: { $0.name == environment }) else {
          throw UsageError(
            "There is no environment \"\(environment)\" in \(invocation.config.file); the"
              + " environments are: \(all.map(\.name).joined(separator: ", ")).")
        }
        origin = named.origin
      }
      let composed = try invocation.services()
      guard let removed = try await composed.clearCache(origin: origin) else {
        throw CacheCommand.noCache(invocation)
      }
      // What is left of what was cleared: the entities showing an edit not yet sent.
      let left = try await composed.cacheStatistics()
      let kept = origin.map { left?.entriesByOrigin[$0] ?? 0 } ?? left?.entries ?? 0
      let what = Reply.count(removed, "answer")
      let whose = environment.map { " of \($0) (\(origin ?? ""))" } ?? ""
      let keeping =
        kept == 0
        ? ""
        : "; \(kept) showing a change not yet sent \(kept == 1 ? "stays" : "stay") until the"
          + " outbox sends \(kept == 1 ? "it" : "them") (outbox list; outbox drop undoes one)"
      try Reply.say(
        invocation, "Cleared the cache: \(what)\(whose) removed\(keeping).",
        ["removed": removed, "kept": kept])
    }
  }

  /// A profile whose stacks keep no cache.
  static func noCache(_ invocation: Invocation) -> UsageError {
    UsageError(
      "The \(invocation.config.profile) profile keeps no cache; use --profile offline or layered.")
  }
}
