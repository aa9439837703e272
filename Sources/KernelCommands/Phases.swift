import Foundation
import Synchronization

/// Where a run's time goes, from `main` on: each phase ends with a mark, and `-v` prints them
/// all when the command is done (`phases: app 1 ms, arguments 2 ms, config 1 ms, …`).
/// Kernel marks its own phases (the app's catalog, parsing the arguments, the config, the
/// container, the first answer, the output); an app's command may mark its own.
public enum Phases {
  private struct State {
    var started: ContinuousClock.Instant?
    var last: ContinuousClock.Instant?
    var marks: [(String, Duration)] = []
    var report: (@Sendable (String) -> Void)?
  }

  private static let state = Mutex(State())

  /// Starts the timeline: `main` calls it first.
  static func start() {
    let now = ContinuousClock.now
    state.withLock { $0 = State(started: now, last: now) }
  }

  /// Ends the phase called `name` now.
  public static func mark(_ name: String) {
    let now = ContinuousClock.now
    state.withLock { state in
      guard let last = state.last else { return }
      state.marks.append((name, now - last))
      state.last = now
    }
  }

  /// Where the summary goes (the `-v` log), once an invocation knows whether it is wanted.
  static func report(to log: @escaping @Sendable (String) -> Void) {
    state.withLock { $0.report = log }
  }

  /// Marks `name`, then tells the report every phase and the time since `main`.
  static func finish(_ name: String) {
    mark(name)
    let (report, line) = state.withLock { state -> ((@Sendable (String) -> Void)?, String) in
      guard state.report != nil else { return (nil, "") }
      let phases = state.marks.map { "\($0.0) \($0.1.wholeMilliseconds) ms" }
      var since = ""
      if let started = state.started, let last = state.last {
        since = "; \((last - started).wholeMilliseconds) ms since main"
      }
      return (state.report, "phases: " + phases.joined(separator: ", ") + since)
    }
    report?(line)
  }

}
