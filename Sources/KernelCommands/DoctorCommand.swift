import ArgumentParser
import Composition
import Domain
import Foundation

/// `kernel doctor`: boots every profile, validates its container, checks the data dir.
struct DoctorCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "doctor",
    abstract:
      "Boot and validate every profile and check the data dir; non-zero exit on any problem.")
  @OptionGroup var global: GlobalOptions

  func run() async throws {
    let first = try Invocation(global)
    var problems: [any Error] = []
    var checks: [[String: any Sendable]] = []
    func check(_ name: String, _ body: () throws -> String) throws {
      let line: String
      do {
        let detail = try body()
        checks.append(["check": name, "ok": true, "detail": detail])
        line = "ok    \(name): \(detail)"
      } catch {
        problems.append(error)
        checks.append(["check": name, "ok": false, "detail": Failure.sentence(error)])
        line = "FAIL  \(name): \(Failure.sentence(error))"
      }
      if first.format == .text { try Terminal.print(line) }
    }
    try check("config") { "\(first.config.file), profile \(first.config.profile)" }
    try check("data dir") {
      try first.checkDataDirectory()
    }
    for profile in first.document.profileNames.sorted() {
      try check("profile \(profile)") {
        let invocation = try Invocation(global, profile: profile)
        let composed = try invocation.inspect()
        let stacks = (invocation.config.profiles[profile]?.stacks ?? [:]).sorted { $0.key < $1.key }
          .map { "\($0.key) [\($0.value.entries.joined(separator: ", "))]" }
        return
          "\(stacks.joined(separator: ", ")) builds and validates (\(composed.registrationCount) registrations)"
      }
    }
    try check("transport") {
      try first.inspect().checkTransport()
    }
    // Kept writes are the user's to see, not a fault: a conflict or a rejection waits for them.
    var tally: Result<[WriteState: Int]?, any Error>
    do { tally = .success(try await OutboxCommand.tally(first, options: global)) } catch {
      tally = .failure(error)
    }
    // Rows an older app stored are the app's to migrate, not a fault: said, never failed on; so
    // are damaged ones, which answers leave out and a network profile stores anew.
    var rows: Result<[String]?, any Error>
    do {
      let composed = try first.inspect()
      if let stats = try await composed.cacheStatistics() {
        let older = CacheCommand.said(composed.olderModelRows(in: stats))
        let damaged = CacheCommand.said(damaged: try await composed.damagedModelRows(in: stats))
        rows = .success(older + damaged)
      } else {
        rows = .success(nil)
      }
    } catch { rows = .failure(error) }
    try check("stored models") {
      guard let said = try rows.get() else { return "no stack keeps a cache" }
      return said.isEmpty ? "every stored row reads as its type" : said.joined(separator: "; ")
    }
    try check("outbox") {
      guard let counts = try tally.get() else { return "no write stack keeps one" }
      let waiting = (counts[.conflict] ?? 0) + (counts[.rejected] ?? 0) + (counts[.damaged] ?? 0)
      return OutboxCommand.said(counts)
        + (waiting > 0 ? "; outbox list shows what needs you" : "")
    }
    if first.format == .json {
      try Terminal.printExact(try Reply.json(["ok": problems.isEmpty, "checks": checks]))
    }
    if let problem = problems.first {
      Terminal.error(
        "\(first.app.name) doctor found \(problems.count) problem(s); the first: \(Failure.sentence(problem))"
      )
      throw ExitCode(Failure.code(for: problem))
    }
  }
}
