import Foundation
import KernelTesting
import Testing

/// Every Swift sample in README.md is a region of a test that compiles and runs: the README's
/// copy and the test's are the same text.
@Suite struct ReadmeSnippetsTests {
  @Test func everySwiftSampleIsNamedAndEqualsItsTestedRegions() throws {
    let root = Snippets.repositoryRoot()
    let readme = try Snippets(document: root.appendingPathComponent("README.md"))
    #expect(readme.unnamed.isEmpty, "README.md has Swift samples without <!-- snippet: NAME -->")
    #expect(readme.samples.count >= 5)
    for (name, sample) in readme.samples.sorted(by: { $0.key < $1.key }) {
      // The tests', the container's tests' and the example app's, all compiled (CI builds and
      // tests ContainerTests and Examples/Books).
      let tested = try ["Tests", "ContainerTests/Tests", "Examples"].flatMap {
        try Snippets.regions(named: name, under: root.appendingPathComponent($0))
      }
      #expect(!tested.isEmpty, "no test holds the README's sample \(name)")
      #expect(
        sample == tested,
        "README's \(name) differs from the tests':\n\(sample.joined(separator: "\n"))\n---\n\(tested.joined(separator: "\n"))"
      )
    }
  }

  /// The example app's config is in the README whole, as the file is.
  @Test func theExamplesConfigIsShownAsItIs() throws {
    let root = Snippets.repositoryRoot()
    let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
    let config = try String(
      contentsOf: root.appendingPathComponent("Examples/Books/Config/books.yaml"), encoding: .utf8)
    #expect(readme.contains("```yaml\n" + config + "```\n"))
  }

  /// A complete app on Kernel, manifest, sources and config together, in at most 250 lines.
  @Test func theExampleAppIsSmall() throws {
    let books = Snippets.repositoryRoot().appendingPathComponent("Examples/Books")
    let sources =
      FileManager.default.enumerator(
        at: books.appendingPathComponent("Sources"), includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
      // What scripts/embed-config generates from the YAML (counted below) is not written.
      .filter {
        !((try? String(contentsOf: $0, encoding: .utf8))?.hasPrefix("// Generated") ?? false)
      }
      ?? []
    let files =
      sources + ["Package.swift", "Config/books.yaml"].map { books.appendingPathComponent($0) }
    let lines = try files.map {
      try String(contentsOf: $0, encoding: .utf8).split(
        separator: "\n", omittingEmptySubsequences: false
      )
      .count - 1
    }
    #expect(sources.count >= 2)
    #expect(
      lines.reduce(0, +) <= 250, "\(lines.reduce(0, +)) lines in \(files.map(\.lastPathComponent))")
  }

  @Test func aSamplesOutputIsReadFromItsComments() {
    let sample = [
      "let x = 1", "print(x)  // 1", "print(graph)", "// a", "// └─ b", "print(y)", "let z = 2",
    ]
    #expect(Snippets.expectedOutput(of: sample) == ["1", "a", "└─ b"])
  }
}
