import ArgumentParser
import Injection

/// `kernel graph`: the dependency graph the profile builds, validated.
struct GraphCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graph",
    abstract: "The dependency graph the profile builds: a text tree, or --format dot or mermaid.")
  @OptionGroup var global: GlobalOptions

  func run() async throws {
    let session = try Session(global)
    let format: DependencyGraph.Format
    switch session.format {
    case .text: format = .text
    case .dot: format = .dot
    case .mermaid: format = .mermaid
    case .json: throw UsageError("graph prints text, dot or mermaid, not json.")
    }
    let container = try session.container()
    Terminal.print(container.graph.rendered(as: format))
  }
}
