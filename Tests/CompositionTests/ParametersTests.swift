import Composition
import Foundation
import Testing

@Suite struct ParametersTests {
  /// Spaces and tabs around names and arguments are dropped as Foundation's `.whitespaces`
  /// drops them (Unicode space separators included), newlines and other characters kept.
  @Test(arguments: [
    "cache", " cache ", "\tcache(cacheFirst, 300)\t", "apiKey( header : X-Api-Key )",
    "retry(\u{00A0}3,\u{2003}backoff: 2\u{3000})", "odd(\u{200B}zero-width\u{200B})",
    "lines(a\n, b)", "marks(\u{180E}a\u{FEFF}, \u{2028}b\u{85})", "\u{1680}c\u{202F}(\u{205F}d)",
    "\u{00A0}\u{00A0}", "x( ,  , y)",
  ])
  func argumentsAreTrimmedAsFoundationTrimsThem(text: String) throws {
    let trim = { (part: Substring) in part.trimmingCharacters(in: .whitespaces) }
    let trimmed = trim(Substring(text))
    let name = trim(Substring(trimmed.prefix { $0 != "(" }))
    guard !name.isEmpty else {
      #expect(throws: (any Error).self) { try Parameters.parse(text, file: "f", key: "k") }
      return
    }
    let parsed = try Parameters.parse(text, file: "f", key: "k")
    #expect(parsed.name == name)
    var positional: [String] = []
    var named: [String: String] = [:]
    if let open = trimmed.firstIndex(of: "("), trimmed.hasSuffix(")") {
      let inside = trimmed[trimmed.index(after: open)..<trimmed.index(before: trimmed.endIndex)]
      for piece in inside.split(separator: ",") {
        let argument = trim(piece)
        if let colon = argument.firstIndex(of: ":") {
          named[trim(argument[..<colon])] = trim(argument[argument.index(after: colon)...])
        } else {
          positional.append(argument)
        }
      }
    }
    #expect(parsed.positional == positional)
    #expect(parsed.named == named)
  }
}
