import Foundation
import KernelTesting
import Testing

/// The command line's small edges, end to end with the built `kernel` on the sample api (in
/// process): each ends with its exit code and one sentence naming what is wrong, or does what
/// was asked.
@Suite(.timeLimit(.minutes(5))) struct CommandLineEdgesTests {
  @Test func aNegativeNumberIsNamedNotTakenForAMissingArgument() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(["movies", "rate", "-1", "50"])
    #expect(run.status == 64, "\(run)")
    #expect(run.stderr.contains("-1 is a negative number"), "\(run)")
    #expect(!run.stderr.contains("Missing expected argument"), "\(run)")
  }

  @Test func anEmptyFlagValueIsEmptyAndNeverSwallowsTheNextArgument() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(["--timeouts-call-seconds=", "movies", "get", "1"])
    #expect(run.status == 78, "\(run)")
    #expect(run.stderr.contains("--timeouts-call-seconds is \"\""), "\(run)")
  }

  @Test func aConfigFlagAfterIdsKeepsItsValue() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(
      ["movies", "get", "1", "2", "--timeouts-call-seconds", "5", "--format", "json"])
    #expect(run.status == 0, "\(run)")
    let movies = run.json?["movies"] as? [[String: Any]]
    #expect(movies?.compactMap { $0["id"] as? Int } == [1, 2], "\(run)")
  }

  @Test func aFlagsOrVariablesBadValueIsBlamedOnIt() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let flag = try await kernel.run(["--retriers", "bogus", "movies", "get", "1"])
    #expect(flag.status == 78, "\(flag)")
    #expect(flag.stderr.hasPrefix("the command line: --retriers[0] names \"bogus\""), "\(flag)")
    let variable = try await kernel.run(
      ["movies", "get", "1"], variables: ["KERNEL_ENVIRONMENTS_SAMPLE_AUTH": "nope"])
    #expect(variable.status == 78, "\(variable)")
    #expect(
      variable.stderr.hasPrefix("the environment: KERNEL_ENVIRONMENTS_SAMPLE_AUTH names"),
      "\(variable)")
    for run in [flag, variable] { #expect(!run.stderr.contains("built-in config"), "\(run)") }
  }

  @Test func anEmptyConfigFlagIsRefusedAsEmpty() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let run = try await kernel.run(["--config", "", "config", "show"])
    #expect(run.status == 78, "\(run)")
    #expect(run.stderr.contains("--config is \"\""), "\(run)")
    #expect(!run.stderr.contains("directory"), "\(run)")
  }

  /// A cache file another program made with a view that never ends where the table was is
  /// moved aside, never read for ever; an outbox so made is refused, untouched.
  @Test func aCacheOrOutboxWithARecursiveViewIsNeverRead() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    #expect(try await kernel.run(["movies", "get", "1"]).status == 0)
    #expect(
      try await kernel.run(["--profile", "offline", "movies", "rate", "1", "50"]).status == 0)
    let endless =
      "CREATE VIEW NAME AS WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c)"
      + " SELECT n FROM c;"
    for (file, table) in [("cache.sqlite", "cache_entry"), ("outbox.sqlite", "outbox_write")] {
      let sql =
        "ALTER TABLE \(table) RENAME TO old; "
        + endless.replacingOccurrences(of: "NAME", with: table)
      _ = try await kernel.sqlite3(file, sql)
    }
    let offline = try await kernel.run(
      ["--profile", "offline", "movies", "get", "1"], within: .seconds(30))
    #expect(offline.status == 69, "\(offline)")
    #expect(offline.stderr.contains("was damaged"), "\(offline)")
    let listed = try await kernel.run(["outbox", "list"], within: .seconds(30))
    #expect(listed.status == 78, "\(listed)")
    #expect(listed.stderr.contains("is not the table Kernel made"), "\(listed)")
    #expect(!listed.stderr.contains("The outbox the outbox"), "\(listed)")
    // cache stats says what it can of the cache and names the outbox's problem.
    let stats = try await kernel.run(["cache", "stats"], within: .seconds(30))
    #expect(stats.status == 0, "\(stats)")
    #expect(stats.stdout.contains("writes:  unknown:"), "\(stats)")
  }
}
