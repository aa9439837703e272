import ArgumentParser

/// The process entry. Not in main.swift: with an async root command, ArgumentParser would pick
/// its synchronous entry there. Every failure becomes one sentence and its exit code here.
@main struct Entry {
  static func main() async {
    do {
      var command = try Kernel.parseAsRoot()
      if var asynchronous = command as? any AsyncParsableCommand {
        try await asynchronous.run()
      } else {
        try command.run()
      }
    } catch {
      Failure.exit(with: error)
    }
  }
}
