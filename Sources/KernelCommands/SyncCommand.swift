import ArgumentParser
import Composition
import Domain
import Foundation
import Layers

/// `kernel sync`: sends the kept writes that are due, then brings the store up to date with
/// every changes feed the app declares.
struct SyncCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "sync",
    abstract: "Send the kept writes that are due, then bring the stored data up to date.",
    discussion: """
      First sends the writes the outbox keeps that are due (as every run that reaches the api \
      does; outbox sync sends them all, due or not), saying how many were sent. Then asks each \
      changes feed the app declares (catalog.feed) for what was created, updated \
      and deleted since the last sync, a page at a time, and applies each page to the store \
      with the feed's token in one transaction: a sync stopped at any point goes on from the \
      last page applied, nothing applied twice. Deleted entities leave every stored list; an \
      entity with an edit not yet sent keeps showing the edit. Says what changed \
      (+created ~updated -deleted); with --watch, syncs again every --every seconds until \
      Ctrl-C (exit 0), and an api out of reach or failing is said on stderr and tried again \
      at the next one. Needs a profile that reaches the api (exit 69 under offline).
      """)

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Sync again every --every seconds, printing what each sync changed, until Ctrl-C.")
  var watch = false

  @Option(help: "Seconds between syncs with --watch (1 to 86400; default 30).")
  var every: Int?

  func validate() throws {
    guard let every else { return }
    guard watch else {
      throw ValidationError("--every is how often --watch syncs; give --watch too, or drop it.")
    }
    guard (1...86_400).contains(every) else {
      throw ValidationError("--every must be from 1 to 86400 seconds, not \(every).")
    }
  }

  func run() async throws {
    let invocation = try Invocation(global)
    let composed = try invocation.services()
    // Ctrl-C ends a watch with exit 0, as every --watch does.
    let interrupted = watch ? Invocation.exitOnInterrupt() : []
    defer {
      for source in interrupted { source.cancel() }
    }
    let interval = every ?? 30
    repeat {
      let shows = Terminal.showsProgress
      let writes: SyncReport?
      let summaries: [SyncSummary]
      do {
        (writes, summaries) = try await composed.makeCurrent {
          defer { if shows { Terminal.endProgress() } }
          // Pushed first: what the feeds say next already holds what the api took.
          let writes = try await composed.syncDueWrites()
          let summaries = try await composed.sync { summary in
            if shows {
              Terminal.progress("syncing \(summary.name): page \(summary.pages), \(summary)")
            }
          }
          return (writes, summaries)
        }
      } catch let error
        where watch && [.unreachable, .unavailable].contains(ServiceFailure.of(error))
      {
        // A watch outlives the api going away: said, then tried again; a page applied stays.
        Terminal.error("\(Failure.sentence(error)) Syncing again in \(interval) s.")
        try await Task.sleep(for: .seconds(interval))
        continue
      }
      if invocation.format == .json {
        var reply: [String: any Sendable] = ["feeds": summaries.map(Self.fields)]
        reply["writes"] = writes.map(Self.fields)
        try Terminal.printExact(try Reply.json(reply))
      } else {
        if let writes, writes.tried > 0 {
          try Terminal.print(
            "Sent \(Reply.count(writes.sent.count, "kept write")); \(writes.conflicts.count)"
              + " in conflict, \(writes.rejected.count) rejected, \(writes.failed.count) still"
              + " waiting (outbox list shows them).")
        }
        if summaries.isEmpty {
          try Terminal.print(
            "This app declares no changes feed for the services this profile stacks.")
        }
        for summary in summaries {
          try Terminal.print("\(summary) (\(Reply.count(summary.pages, "page")))")
        }
      }
      guard watch else { return }
      try await Task.sleep(for: .seconds(interval))
    } while true
  }

  /// What the writes sent before the feeds came to, as JSON.
  static func fields(_ report: SyncReport) -> [String: any Sendable] {
    [
      "sent": report.sent.count, "conflicts": report.conflicts.count,
      "rejected": report.rejected.count, "failed": report.failed.count,
    ]
  }

  /// A summary as JSON.
  static func fields(_ summary: SyncSummary) -> [String: any Sendable] {
    [
      "name": summary.name, "created": summary.created, "updated": summary.updated,
      "deleted": summary.deleted, "pages": summary.pages, "token": summary.token ?? NSNull(),
    ]
  }
}
