import Foundation
import KernelTesting
import Testing

/// The documents' picture (CONTRIBUTING.md) and config reference (*Configuration*) stay true
/// to the built `kernel`; the README's prerequisites name what CI installs.
@Suite(.timeLimit(.minutes(5))) struct ReadmeTests {
  static var readme: String { get throws { try document("README.md") } }

  static func document(_ path: String) throws -> String {
    let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(path)
    return try String(contentsOf: file, encoding: .utf8)
  }

  @Test func thePictureIsWhatGraphDraws() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let graph = try await kernel.run(["graph", "--format", "mermaid"])
    #expect(graph.status == 0, "\(graph)")
    let map = try Self.document("CONTRIBUTING.md")
    guard let start = map.range(of: "```mermaid\n"),
      let end = map.range(of: "\n```", range: start.upperBound..<map.endIndex)
    else { throw TestFailure("CONTRIBUTING.md has no mermaid block") }
    #expect(
      String(map[start.upperBound..<end.lowerBound])
        == graph.stdout.trimmingCharacters(in: .newlines))
  }

  @Test func everyKeyConfigShowPrintsIsInTheReference() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let shown = try await kernel.run(["config", "show", "--format", "json"])
    let settings = try #require(shown.json?["settings"] as? [[String: Any]], "\(shown)")
    let keys = Set(
      settings.compactMap { $0["key"] as? String }.map { key -> String in
        let parts = key.split(separator: ".")
        return parts.first == "environments" && parts.count == 3
          ? "environments.NAME.\(parts[2])" : key
      })
    #expect(keys.count > 10)
    let reference = try Self.document("Composition/Composition.docc/Configuration.md")
    for key in keys.sorted() {
      #expect(reference.contains("| `\(key)`"), "the config reference lacks \(key)")
    }
    // The same reference, as JSON a script reads: every key, with its range and built-in value.
    let json = try await kernel.run(["config", "reference", "--format", "json"])
    let listed = try #require(json.json?["keys"] as? [[String: Any]], "\(json)")
    let named = Set(listed.compactMap { $0["key"] as? String })
    #expect(keys.isSubset(of: named), "\(keys.subtracting(named))")
    #expect(named.count == reference.components(separatedBy: "\n| `").count - 1)
    let maxBytes = listed.first { $0["key"] as? String == "cache.maxBytes" }
    #expect((maxBytes?["range"] as? [String: Int])?["min"] == 65536, "\(listed)")
    #expect(maxBytes?["variable"] as? String == "KERNEL_CACHE_MAX_BYTES")
  }
}

extension ReadmeTests {
  /// Every system package CI installs for the build and the tests is one the README's
  /// prerequisites name: a fresh machine set up from the README builds and tests.
  @Test func thePrerequisitesNameEverySystemPackageCIInstalls() throws {
    let readme = try Self.readme
    let ci = try String(
      contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent(".ci/run"), encoding: .utf8)
    let line = try #require(ci.split(separator: "\n").first { $0.hasPrefix("for package in ") })
    let packages = line.dropFirst("for package in ".count).split(separator: ";")[0]
      .split(separator: " ").map(String.init)
    #expect(packages.count > 5, "\(packages)")
    let start = try #require(readme.range(of: "## Prerequisites"))
    let end = try #require(readme.range(of: "\n## ", range: start.upperBound..<readme.endIndex))
    let section = readme[start.upperBound..<end.lowerBound]
    for package in packages {
      #expect(section.contains("`\(package)`") || section.contains(" \(package)"), "\(package)")
    }
  }
}

extension ReadmeTests {
  /// The command front is an app like any other: it sees its own module (the movie example's,
  /// as `books` sees BooksKit), the composition, the domain and the command library, never the
  /// api, the store or the layers directly.
  @Test func theKernelExecutableImportsOnlyWhatAnAppImports() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Sources/kernel")
    // KernelServe and SampleApi: `serve`, with the sample api's options, as an app that serves
    // a sample api of its own names them.
    let allowed: Set = [
      "MoviesKit", "Composition", "Domain", "KernelCommands", "KernelServe", "SampleApi",
      "ArgumentParser", "Logging", "Foundation", "Synchronization",
    ]
    var imported: Set<String> = []
    for name in try FileManager.default.contentsOfDirectory(atPath: folder.path)
    where name.hasSuffix(".swift") {
      let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
      for line in text.split(separator: "\n") where line.hasPrefix("import ") {
        imported.insert(String(line.dropFirst("import ".count)))
      }
    }
    #expect(imported.subtracting(allowed).isEmpty, "\(imported.subtracting(allowed))")
  }

  /// The module edges a reader expects: a generated client's transport runs on the layers, not
  /// the composition; the generic commands serve no sample api; the movie example's calls know no
  /// command line.
  @Test func theModulesImportWhatTheirPlaceAllows() throws {
    let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
    func imports(_ module: String) throws -> Set<String> {
      let folder = sources.appendingPathComponent(module)
      let files =
        FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
        .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
      var found: Set<String> = []
      for file in files {
        for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        where line.hasPrefix("import ") || line.hasPrefix("@_exported import ") {
          found.insert(String(line.split(separator: " ").last ?? ""))
        }
      }
      return found
    }
    #expect(try imports("KernelOpenAPI").isDisjoint(with: ["Composition", "Store", "Injection"]))
    #expect(try imports("KernelOpenAPI").isSuperset(of: ["Layers", "Api"]))
    #expect(try !imports("KernelCommands").contains("SampleApi"))
    #expect(try imports("MoviesKit").isDisjoint(with: ["KernelCommands", "ArgumentParser"]))
  }

  /// The Swift files under `Sources/<module>` (any depth) and their text.
  static func sources(_ module: String) throws -> [(path: String, text: String)] {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent(module == "Composition" ? module : "Sources/\(module)")
    let files =
      FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
    return try files.map {
      (
        $0.path.replacingOccurrences(of: folder.path + "/", with: ""),
        try String(contentsOf: $0, encoding: .utf8)
      )
    }
  }

  /// The generic library's public types (a public struct, class, enum, protocol, actor or
  /// typealias declared at the start of a line) stay at most 220: what an app must learn.
  @Test func theGenericModulesDeclareAtMost220PublicTypes() throws {
    let modules = [
      "Injection", "Domain", "Api", "Layers", "Store", "Composition", "KernelCommands",
      "KernelTesting", "KernelTestingComposition", "SampleApi", "KernelOpenAPI", "KernelServe",
    ]
    let kinds: Set<Substring> = ["struct", "class", "enum", "protocol", "actor", "typealias"]
    var count = 0
    for module in modules {
      for (_, text) in try Self.sources(module) {
        for line in text.split(separator: "\n") {
          let words = line.split(separator: " ").drop { $0.hasPrefix("@") }
          guard words.first == "public" else { continue }
          let kind =
            words.dropFirst().first == "final" ? words.dropFirst(2).first : words.dropFirst().first
          if let kind, kinds.contains(kind) { count += 1 }
        }
      }
    }
    #expect(count > 100 && count <= 220, "\(count) public types")
  }

  /// The movie example declares each call once, in at most 200 lines (its sample api and its
  /// generated config aside), with none of the service types each call once needed.
  @Test func theMovieExampleIsItsCallsInAtMost200Lines() throws {
    let own = try Self.sources("MoviesKit").filter {
      !$0.path.hasPrefix("Sample/") && !$0.text.hasPrefix("// Generated")
    }
    let lines = own.map {
      $0.text.split(separator: "\n", omittingEmptySubsequences: false).count - 1
    }
    #expect(own.count >= 3 && lines.reduce(0, +) <= 200, "\(lines.reduce(0, +)) lines")
    for old in ["MovieSource", "ApiMovieService", "LayeredMovieService", "MovieWatches"] {
      #expect(!own.contains { $0.text.contains(old) }, "\(old)")
    }
  }
}
