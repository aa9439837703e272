import Foundation
import KernelTesting
import Testing

/// Every Swift sample in the documentation (README.md, the DocC catalogs' articles) is a region
/// of a test that compiles and runs: the document's copy and the test's are the same text.
@Suite struct ReadmeSnippetsTests {
  static let root = Snippets.repositoryRoot()
  static let documents = Snippets.documents(under: root)

  @Test func theDocumentsAreTheReadmeTheCatalogsAndTheirArticles() {
    let names = Self.documents.map {
      $0.path.replacingOccurrences(of: Self.root.path + "/", with: "")
    }
    #expect(names.contains("README.md") && names.contains("Benchmarks/README.md"), "\(names)")
    #expect(names.contains("Composition/Composition.docc/GettingStarted.md"), "\(names)")
    #expect(names.filter { $0.contains(".docc/") }.count >= 20, "\(names)")
  }

  @Test func everySwiftSampleIsNamedAndEqualsItsTestedRegions() throws {
    var count = 0
    for document in Self.documents {
      let snippets = try Snippets(document: document)
      let file = document.lastPathComponent
      #expect(snippets.unnamed.isEmpty, "\(file) has Swift samples without <!-- snippet: NAME -->")
      for (name, sample) in snippets.samples.sorted(by: { $0.key < $1.key }) {
        count += 1
        // The tests', the container's tests' and the example app's, all compiled (CI builds and
        // tests ContainerTests and Examples/Books).
        let tested = try ["Tests", "ContainerTests/Tests", "Examples"].flatMap {
          try Snippets.regions(named: name, under: Self.root.appendingPathComponent($0))
        }
        #expect(!tested.isEmpty, "no test holds \(file)'s sample \(name)")
        #expect(
          sample == tested,
          "\(file)'s \(name) differs from the tests':\n\(sample.joined(separator: "\n"))\n---\n\(tested.joined(separator: "\n"))"
        )
      }
    }
    #expect(count >= 10)
  }

  /// The text of the repository's file at `path`.
  static func text(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// The example app's config is in *Getting started* whole, as the file is.
  @Test func theExamplesConfigIsShownAsItIs() throws {
    let article = try Self.text("Composition/Composition.docc/GettingStarted.md")
    let config = try Self.text("Examples/Books/Config/books.yaml")
    #expect(article.contains("```yaml\n" + config + "```\n"))
  }

  /// The generated client's profiles in *OpenAPI clients* are its config's, line for line: a
  /// stack shown that the config would refuse (`[outbox]`, no source) cannot stand there.
  @Test func theOpenAPIExamplesProfilesAreShownAsTheyAre() throws {
    let article = try Self.text("Composition/Composition.docc/OpenAPIClients.md")
    let config = try Self.text("Examples/MoviesOpenAPI/Config/movies-openapi.yaml")
    let shown = try #require(
      article.components(separatedBy: "```yaml\n").dropFirst().first?
        .components(separatedBy: "```").first)
    let lines = config.split(separator: "\n").map(String.init)
    for line in shown.split(separator: "\n") {
      #expect(lines.contains(String(line)), "\(line)")
    }
  }

  /// The README is a front page: what Kernel is, how to run and test it, one screen of the
  /// container and one of an app, and where the rest is.
  @Test func theReadmeIsAFrontPageOfAtMost200Lines() throws {
    let readme = try Self.text("README.md")
    #expect(readme.split(separator: "\n", omittingEmptySubsequences: false).count <= 200)
    let app = "snippet: Examples/Books/Sources/books/Books.swift: struct Books"
    for part in ["## Prerequisites", "snippet: container", app, "Documentation"] {
      #expect(readme.contains(part), "\(part)")
    }
  }

  /// A complete app on Kernel: its Swift in at most 110 lines; manifest, sources and config
  /// together in at most 250.
  @Test func theExampleAppIsSmall() throws {
    let books = Self.root.appendingPathComponent("Examples/Books")
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
    let own = lines.prefix(sources.count).reduce(0, +)
    #expect(own <= 110, "\(own) lines of Swift in \(sources.map(\.lastPathComponent))")
    #expect(
      lines.reduce(0, +) <= 250, "\(lines.reduce(0, +)) lines in \(files.map(\.lastPathComponent))")
  }

  @Test func aSamplesOutputIsReadFromItsComments() {
    let sample = [
      "let x = 1", "print(x)  // 1", "print(graph)", "// a", "// └─ b", "print(y)", "let z = 2",
    ]
    #expect(Snippets.expectedOutput(of: sample) == ["1", "a", "└─ b"])
  }

  /// A sample may name a file (after its imports) or one declaration in it, with its doc comment.
  @Test func aSampleMayNameAFileOrADeclarationInIt() async throws {
    try await withTemporaryDirectory { folder in
      let source = """
        import Foundation

        /// A.
        @main struct A: P {
          let x = 1
        }

        /// B, which opens no brace.
        let b = B(
          1)
        struct C {}

        """
      try FileManager.default.createDirectory(
        at: folder.appending("App"), withIntermediateDirectories: true)
      try source.write(to: folder.appending("App/Main.swift"), atomically: true, encoding: .utf8)
      let region = { (name: String) in try Snippets.regions(named: name, under: folder.url) }
      #expect(
        try region("App/Main.swift: struct A") == [
          "/// A.", "@main struct A: P {", "  let x = 1", "}",
        ])
      #expect(
        try region("App/Main.swift: let b") == [
          "/// B, which opens no brace.", "let b = B(", "  1)",
        ])
      #expect(try region("App/Main.swift").first == "/// A.")
      #expect(try region("App/Main.swift").count == 9)
      #expect(try region("App/Main.swift").last == "struct C {}")
      #expect(try region("App/Main.swift: struct C") == ["struct C {}"])
      #expect(try region("App/Main.swift: struct D").isEmpty)
      #expect(try region("Other/Main.swift").isEmpty)
    }
  }
}
