import ArgumentParser
import Foundation
import Layers

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
      let session = try Session(global)
      let stats = try await CacheCommand.maintenance(session).statistics()
      let now = Date()
      if session.format == .json {
        var fields: [String: any Sendable] = [
          "file": stats.file ?? "", "bytes": stats.bytes, "entries": stats.entries,
        ]
        fields["oldestAgeSeconds"] = stats.oldest.map { Int(now.timeIntervalSince($0)) }
        fields["newestAgeSeconds"] = stats.newest.map { Int(now.timeIntervalSince($0)) }
        Terminal.print(try Reply.json(fields))
        return
      }
      Terminal.print("cache:   \(stats.file ?? "in memory")")
      Terminal.print("size:    \(MovieOutput.grouped(Int(stats.bytes))) bytes")
      Terminal.print("answers: \(stats.entries)")
      if let oldest = stats.oldest, let newest = stats.newest {
        Terminal.print("oldest:  \(MovieOutput.age(now.timeIntervalSince(oldest)))")
        Terminal.print("newest:  \(MovieOutput.age(now.timeIntervalSince(newest)))")
      }
    }
  }

  struct Clear: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "clear", abstract: "Delete everything cached, in one transaction.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let session = try Session(global)
      let removed = try await CacheCommand.maintenance(session).clear()
      let what = removed == 1 ? "1 answer" : "\(removed) answers"
      try Reply.say(session, "Cleared the cache: \(what) removed.", ["removed": removed])
    }
  }

  /// The cache of the profile; a profile whose stack keeps none gets the offline one's.
  static func maintenance(_ session: Session) throws -> any CacheMaintenance {
    let container = try session.container()
    if let maintenance = try? container.resolve((any CacheMaintenance).self) { return maintenance }
    throw UsageError(
      "The \(session.config.profile) profile keeps no cache; use --profile offline or layered.")
  }
}
