import ArgumentParser
import Composition
import Foundation

/// `kernel cache …`: the SQLite cache in the data dir.
struct CacheCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "cache", abstract: "What the cache holds, or empty it.",
    subcommands: [Stats.self, Clear.self])

  struct Stats: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "stats", abstract: "Answers stored, size, oldest and newest.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      guard let stats = try await invocation.inspect().cacheStatistics() else {
        throw CacheCommand.noCache(invocation)
      }
      let now = Date()
      if invocation.format == .json {
        var fields: [String: any Sendable] = [
          "file": stats.file ?? "", "bytes": stats.bytes, "entries": stats.entries,
        ]
        fields["oldestAgeSeconds"] = stats.oldest.map { Int(now.timeIntervalSince($0)) }
        fields["newestAgeSeconds"] = stats.newest.map { Int(now.timeIntervalSince($0)) }
        try Terminal.printExact(try Reply.json(fields))
        return
      }
      try Terminal.print("cache:   \(stats.file ?? "in memory")")
      try Terminal.print("size:    \(Reply.grouped(Int(stats.bytes))) bytes")
      try Terminal.print("answers: \(stats.entries)")
      if let oldest = stats.oldest, let newest = stats.newest {
        try Terminal.print("oldest:  \(Reply.age(now.timeIntervalSince(oldest)))")
        try Terminal.print("newest:  \(Reply.age(now.timeIntervalSince(newest)))")
      }
    }
  }

  struct Clear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "clear", abstract: "Delete everything cached, in one transaction.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      guard let removed = try await invocation.services().clearCache() else {
        throw CacheCommand.noCache(invocation)
      }
      let what = removed == 1 ? "1 answer" : "\(removed) answers"
      try Reply.say(invocation, "Cleared the cache: \(what) removed.", ["removed": removed])
    }
  }

  /// A profile whose stacks keep no cache.
  static func noCache(_ invocation: Invocation) -> UsageError {
    UsageError(
      "The \(invocation.config.profile) profile keeps no cache; use --profile offline or layered.")
  }
}
