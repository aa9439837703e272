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
      let tested = try Snippets.regions(
        named: name, under: root.appendingPathComponent("Tests"))
      #expect(!tested.isEmpty, "no test holds the README's sample \(name)")
      #expect(
        sample == tested,
        "README's \(name) differs from the tests':\n\(sample.joined(separator: "\n"))\n---\n\(tested.joined(separator: "\n"))"
      )
    }
  }

  @Test func aSamplesOutputIsReadFromItsComments() {
    let sample = [
      "let x = 1", "print(x)  // 1", "print(graph)", "// a", "// └─ b", "print(y)", "let z = 2",
    ]
    #expect(Snippets.expectedOutput(of: sample) == ["1", "a", "└─ b"])
  }
}
