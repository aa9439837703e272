import Api
import ArgumentParser
import Composition
import Domain
import Foundation

/// `kernel doctor`: boots every profile, validates its container, checks the data dir, asks
/// whether the api answers, and says what the store and the outbox hold.
struct DoctorCommand: AsyncParsableCommand {
  /// What is so and is the user's to see, not a fault: `warn` (`"warning": true` in JSON),
  /// exit 0.
  struct Warning: Error {
    let detail: String
  }

  static let configuration = CommandConfiguration(
    commandName: "doctor",
    abstract:
      "Boot and validate every profile, check the data dir, and ask whether the api answers.",
    discussion: """
      A line per check: ok, warn (what is so and is yours to see: the api out of reach, stored \
      rows an older model wrote, writes in conflict; exit 0) or FAIL (a problem: exit non-zero, \
      with the first problem's code).
      """)
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
      } catch let warning as Warning {
        checks.append(["check": name, "ok": true, "warning": true, "detail": warning.detail])
        line = "warn  \(name): \(warning.detail)"
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
    // The api in use, asked once (its context read, nothing created in the data dir). Out of
    // reach is what an offline-first app lives with: said, never failed on.
    var reached: Result<Int, any Error>
    let api = Result { try first.inspect().api() }
    do { reached = .success(try await api.get().service(ApiClient.self).probe()) } catch {
      reached = .failure(error)
    }
    try check("api") {
      let current = try api.get().current
      do {
        let status = try reached.get()
        return
          "\(current.name) answers at \(current.baseURL) (HTTP \(status) for the base URL itself)"
      } catch let error as ApiError {
        throw Warning(detail: "\(current.name) cannot be reached now: \(Failure.sentence(error))")
      }
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
      guard said.isEmpty else { throw Warning(detail: said.joined(separator: "; ")) }
      return "every stored row reads as its type"
    }
    try check("outbox") {
      guard let counts = try tally.get() else { return "no write stack keeps one" }
      let waiting = (counts[.conflict] ?? 0) + (counts[.rejected] ?? 0) + (counts[.damaged] ?? 0)
      guard waiting == 0 else {
        throw Warning(detail: OutboxCommand.said(counts) + "; outbox list shows what needs you")
      }
      return OutboxCommand.said(counts)
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
