import ArgumentParser

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process entry. Not in main.swift: with an async root command, ArgumentParser would pick
/// its synchronous entry there. Every failure becomes one sentence and its exit code here.
@main struct Entry {
  static func main() async {
    // Past a file-size limit (`ulimit -f`), a write fails with EFBIG, which SQLite reports as a
    // full disk, instead of the signal ending the process with the answer unprinted.
    signal(SIGXFSZ, SIG_IGN)
    // A closed pipe is an error of `write`, which `Terminal` turns into a quiet exit (141), not
    // a signal that could land in the middle of a cache write.
    signal(SIGPIPE, SIG_IGN)
    // SIGQUIT quits, as it does for any program; Swift's runtime would print a crash report
    // for it and carry on.
    signal(SIGQUIT, SIG_DFL)
    Terminal.guardStandardDescriptors()
    let (arguments, ids) = BulkIds.split(Array(CommandLine.arguments.dropFirst()))
    do {
      try await BulkIds.$current.withValue(ids) {
        var command = try Kernel.parseAsRoot(arguments)
        if var asynchronous = command as? any AsyncParsableCommand {
          try await asynchronous.run()
        } else {
          try command.run()
        }
      }
    } catch {
      Failure.exit(with: error)
    }
  }
}
