import ArgumentParser

/// `kernel graph`: the dependency graph the profile builds, validated.
struct GraphCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "graph",
    abstract: "The dependency graph the profile builds: a text tree, or --format dot or mermaid.")
  @OptionGroup var global: GlobalOptions

  func run() async throws {
    let invocation = try Invocation(global, formats: [.text, .dot, .mermaid])
    guard let graph = try invocation.inspect().graph(invocation.format.rawValue) else {
      throw UsageError("graph prints text, dot or mermaid, not \(invocation.format.rawValue).")
    }
    try Terminal.print(graph)
  }
}
