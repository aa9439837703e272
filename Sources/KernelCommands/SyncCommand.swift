import ArgumentParser
import Composition
import Foundation
import Layers

/// `kernel sync`: brings the store up to date with every changes feed the app declares.
struct SyncCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sync",
    abstract: "Bring the stored data up to date with the api's changes feeds.",
    discussion: """
      Asks each changes feed the app declares (catalog.feed) for what was created, updated \
      and deleted since the last sync, a page at a time, and applies each page to the store \
      with the feed's token in one transaction: a sync stopped at any point goes on from the \
      last page applied, nothing applied twice. Deleted entities leave every stored list; an \
      entity with an edit not yet sent keeps showing the edit. Says what changed \
      (+created ~updated -deleted); with --watch, syncs again every --every seconds until \
      Ctrl-C. Needs a profile that reaches the api (exit 69 under offline).
      """)

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Sync again every --every seconds, printing what each sync changed, until Ctrl-C.")
  var watch = false

  @Option(help: "Seconds between syncs with --watch (1 to 86400).")
  var every: Int = 30

  func validate() throws {
    guard (1...86_400).contains(every) else {
      throw ValidationError("--every must be from 1 to 86400 seconds, not \(every).")
    }
  }

  func run() async throws {
    let invocation = try Invocation(global)
    let composed = try invocation.services()
    repeat {
      let shows = Terminal.showsProgress
      let summaries = try await composed.makeCurrent {
        defer { if shows { Terminal.endProgress() } }
        return try await composed.sync { summary in
          if shows {
            Terminal.progress("syncing \(summary.name): page \(summary.pages), \(summary)")
          }
        }
      }
      if invocation.format == .json {
        try Terminal.printExact(try Reply.json(["feeds": summaries.map(Self.fields)]))
      } else if summaries.isEmpty {
        try Terminal.print(
          "This app declares no changes feed for the services this profile stacks.")
      } else {
        for summary in summaries { try Terminal.print("\(summary) (\(Self.pages(summary.pages)))") }
      }
      guard watch else { return }
      try await Task.sleep(for: .seconds(every))
    } while true
  }

  static func pages(_ count: Int) -> String { count == 1 ? "1 page" : "\(count) pages" }

  /// A summary as JSON.
  static func fields(_ summary: SyncSummary) -> [String: Any] {
    [
      "name": summary.name, "created": summary.created, "updated": summary.updated,
      "deleted": summary.deleted, "pages": summary.pages, "token": summary.token ?? NSNull(),
    ]
  }
}
