import Composition
import KernelCommands
import KernelServe
import MoviesKit

/// `kernel`: Kernel's generic commands and the movie commands, over whichever stack a profile
/// names.
@main struct Entry: CommandLineMain {
  static let commandLine = CommandLineApp(
    .kernel,
    abstract:
      "Movies from a REST api, a SQLite cache, or both layered, as Config/kernel.yaml says.",
    examples: """
      Examples:
        kernel movies top-grossing --year 2016
        kernel --profile offline movies top-rated --year 2016 --format json
        kernel serve --port 8080 &
        kernel --profile api --environment local movies get 1 2 3
      """,
    commands: [MoviesCommand.self],
    bulkArguments: [
      BulkArguments(command: ["movies", "get"], optionsWithValues: ["--concurrency"])
    ]
  ).serving(SampleMovieApi.self)
}
