import Foundation

/// Keeps a document's code samples true: every ```swift block of a Markdown file, named by an
/// HTML comment `<!-- snippet: NAME -->` on the line before it, must equal the source regions
/// `// snippet: NAME` … `// end snippet` of the tests (regions of one name are joined in
/// order), which the compiler builds and the tests run. A name may instead point into a source
/// file, so an example app's code carries no markers: `PATH.swift` is that file after its
/// imports, and `PATH.swift: DECLARATION` (`…/Books.swift: struct Get`) is one declaration
/// with its doc comment, through its closing brace. A sample's printed output is written
/// in it as comments (`print(x)  // 42`, or full-line comments right after a `print`), and a
/// test compares what it printed with `expectedOutput`.
public struct Snippets: Sendable {
  /// The samples by name, each as its lines with the common indentation removed.
  public let samples: [String: [String]]
  /// Swift blocks that carry no name: each should be named, so it can be checked.
  public let unnamed: [String]

  /// Reads the samples of the Markdown file at `document`.
  public init(document: URL) throws {
    let lines = try String(contentsOf: document, encoding: .utf8).components(separatedBy: "\n")
    var samples: [String: [String]] = [:]
    var unnamed: [String] = []
    var index = 0
    while index < lines.count {
      guard lines[index].trimmingCharacters(in: .whitespaces) == "```swift" else {
        index += 1
        continue
      }
      let name = index > 0 ? Self.name(in: lines[index - 1], marker: "<!-- snippet:") : nil
      var body: [String] = []
      index += 1
      while index < lines.count, lines[index].trimmingCharacters(in: .whitespaces) != "```" {
        body.append(lines[index])
        index += 1
      }
      index += 1
      if let name {
        samples[name] = Self.dedented(body)
      } else {
        unnamed.append(body.first ?? "")
      }
    }
    self.samples = samples
    self.unnamed = unnamed
  }

  /// The Markdown documents under `root` whose samples are kept true: the `*.md` files at its
  /// top level and in `Benchmarks/`, and every article of a DocC catalog (`*.docc/**/*.md`)
  /// below it (hidden folders and `.build` skipped), sorted by path.
  public static func documents(under root: URL) -> [URL] {
    let top = ["", "Benchmarks/"].flatMap { folder in
      let url = root.appendingPathComponent(folder)
      let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
      return names.filter { $0.hasSuffix(".md") }.map { url.appendingPathComponent($0) }
    }
    let articles =
      FileManager.default.enumerator(
        at: root, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])?
      .compactMap { $0 as? URL }
      .filter { $0.pathExtension == "md" && $0.path.contains(".docc/") } ?? []
    return (top + articles).sorted { $0.path < $1.path }
  }

  /// The sample `name` of whichever of `documents` holds it.
  public static func sample(named name: String, in documents: [URL]) throws -> [String]? {
    for document in documents {
      if let sample = try Snippets(document: document).samples[name] { return sample }
    }
    return nil
  }

  /// The folder holding `Package.swift` above `file` (pass `#filePath`): where a test finds the
  /// README and the other tests' sources.
  public static func repositoryRoot(of file: String = #filePath) -> URL {
    var folder = URL(fileURLWithPath: file).deletingLastPathComponent()
    while folder.path != "/" {
      if FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path)
      {
        return folder
      }
      folder = folder.deletingLastPathComponent()
    }
    return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
  }

  /// The regions named `name` in the Swift files under `folder` (hidden ones, `.build`, skipped),
  /// joined in file and line order
  /// with a blank line between two regions.
  public static func regions(named name: String, under folder: URL) throws -> [String] {
    var found: [String] = []
    let files =
      FileManager.default.enumerator(
        at: folder, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])?
      .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
      .sorted { $0.path < $1.path } ?? []
    for file in files {
      let lines = try String(contentsOf: file, encoding: .utf8).components(separatedBy: "\n")
      if let path = name.range(of: ".swift") {
        guard file.path.hasSuffix("/" + name[..<path.upperBound]) else { continue }
        let declaration = name[path.upperBound...].drop { $0 == ":" || $0 == " " }
        found += dedented(region(of: String(declaration), in: lines))
        continue
      }
      var inside = false
      var region: [String] = []
      for line in lines {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if !inside, Self.name(in: trimmed, marker: "// snippet:") == name {
          inside = true
          region = []
        } else if inside, trimmed == "// end snippet" {
          inside = false
          if !found.isEmpty { found.append("") }
          found += Self.dedented(region)
        } else if inside {
          region.append(line)
        }
      }
    }
    return found
  }

  /// The lines of `declaration` in a file's `lines`: from the doc comment above the line that
  /// declares it (attributes and modifiers first on that line are passed over) through the `}`
  /// at that line's indentation, or through the lines indented below it for one that opens no
  /// brace; with no declaration named, the file after its imports. None when the file does not
  /// declare it.
  static func region(of declaration: String, in lines: [String]) -> [String] {
    let indent = { (line: String) in line.prefix { $0 == " " }.count }
    let words = declaration.split(separator: " ")
    guard let name = words.last else {
      return Array(lines.drop { $0.hasPrefix("import ") || $0.isEmpty })
    }
    let modifiers: Set<Substring> = ["public", "internal", "private", "fileprivate", "final"]
    let declares = { (line: String) -> Bool in
      let said = Array(
        line.split(separator: " ").drop { $0.hasPrefix("@") || modifiers.contains($0) })
      guard said.count >= words.count else { return false }
      let named = said[words.count - 1]
      return said.prefix(words.count - 1).elementsEqual(words.dropLast())
        && (named == name || named.hasPrefix(name + ":") || named.hasPrefix(name + "<"))
    }
    guard let line = lines.firstIndex(where: declares) else { return [] }
    var first = line
    while first > 0, lines[first - 1].trimmingCharacters(in: .whitespaces).hasPrefix("///") {
      first -= 1
    }
    let closes = { (at: Int) in
      indent(lines[at]) == indent(lines[line])
        && lines[at].trimmingCharacters(in: .whitespaces).hasPrefix("}")
    }
    var last = line + 1
    if lines[line].hasSuffix("{") {
      while last < lines.count, !closes(last) { last += 1 }
      last += 1
    } else {
      while last < lines.count, indent(lines[last]) > indent(lines[line]) { last += 1 }
    }
    return Array(lines[first..<min(last, lines.count)])
  }

  /// What a sample says it prints: the comment after each `print(…)` on its line, or else the
  /// full-line comments right below it.
  public static func expectedOutput(of sample: [String]) -> [String] {
    var output: [String] = []
    var index = 0
    while index < sample.count {
      let line = sample[index]
      index += 1
      guard line.trimmingCharacters(in: .whitespaces).hasPrefix("print(") else { continue }
      if let comment = line.range(of: "  // ") {
        output.append(String(line[comment.upperBound...]))
        continue
      }
      while index < sample.count {
        let next = sample[index].trimmingCharacters(in: .whitespaces)
        guard next.hasPrefix("//") else { break }
        output.append(next == "//" ? "" : String(next.dropFirst(3)))
        index += 1
      }
    }
    return output
  }

  private static func name(in line: String, marker: String) -> String? {
    let trimmed = line.trimmingCharacters(in: .whitespaces)
    guard trimmed.hasPrefix(marker) else { return nil }
    return trimmed.dropFirst(marker.count).replacingOccurrences(of: "-->", with: "")
      .trimmingCharacters(in: .whitespaces)
  }

  /// The lines without the indentation they share and without trailing blank lines.
  static func dedented(_ lines: [String]) -> [String] {
    var lines = lines.map {
      $0.replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
    }
    while lines.last?.isEmpty == true { lines.removeLast() }
    while lines.first?.isEmpty == true { lines.removeFirst() }
    let indent =
      lines.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
    return lines.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
  }
}
