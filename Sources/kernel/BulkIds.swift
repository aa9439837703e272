import Foundation

/// Many ids on a command line, parsed in linear time.
///
/// ArgumentParser's parsing of a long list of positional values is quadratic (8,000 ids took
/// 32 s), so before it runs the ids of `movies get` are taken out of the arguments here, in one
/// pass, and handed to the command through a task-local. For bulk use, `movies get -` reads the
/// ids from standard input.
enum BulkIds {
  @TaskLocal static var current: [String]?

  /// The options that take a value as the next argument, which is therefore never an id.
  static let optionsWithValues: Set<String> = [
    "--profile", "--environment", "--base-url", "--config", "--data-dir", "--format",
    "--concurrency",
  ]

  /// `arguments` without the plain numbers that follow `movies get`, and those numbers in their
  /// order; nil when the command is not `movies get`.
  static func split(_ arguments: [String]) -> (arguments: [String], ids: [String]?) {
    var words: [String] = []
    var kept: [String] = []
    var ids: [String] = []
    kept.reserveCapacity(arguments.count)
    var takesValue = false
    var afterTerminator = false
    for argument in arguments {
      defer { takesValue = !afterTerminator && optionsWithValues.contains(argument) }
      let isCommand = words.count == 2 && words[0] == "movies" && words[1] == "get"
      if isCommand && !takesValue && isNumber(argument) {
        ids.append(argument)
        continue
      }
      kept.append(argument)
      if argument == "--" { afterTerminator = true }
      if !takesValue && words.count < 2 && (afterTerminator || !argument.hasPrefix("-")) {
        words.append(argument)
      }
    }
    let isCommand = words.count == 2 && words[0] == "movies" && words[1] == "get"
    return isCommand ? (kept, ids) : (arguments, nil)
  }

  private static func isNumber(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 18 && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
  }

  /// `given` as numbers, with `-` replaced by the ids read from standard input.
  static func resolve(_ given: [String]) throws -> [Int] {
    var ids: [Int] = []
    ids.reserveCapacity(given.count)
    for text in given {
      if text == "-" {
        ids += try standardInput()
      } else if let id = Int(text), id > 0 {
        ids.append(id)
      } else {
        throw UsageError("Movie ids are positive whole numbers; \(text) is not one.")
      }
    }
    guard !ids.isEmpty else {
      throw UsageError("Standard input held no movie ids; give them separated by spaces or lines.")
    }
    return ids
  }

  /// The ids on standard input, separated by spaces, commas or newlines.
  private static func standardInput() throws -> [Int] {
    let data = FileHandle.standardInput.readDataToEndOfFile()
    var ids: [Int] = []
    for word in data.split(whereSeparator: { [0x20, 0x09, 0x0A, 0x0D, 0x2C].contains($0) }) {
      guard word.count <= 18, let id = Int(String(decoding: word, as: UTF8.self)), id > 0 else {
        let shown = String(decoding: word.prefix(40), as: UTF8.self)
        throw UsageError(
          "Standard input holds \"\(TerminalText.escaped(shown, keepingNewlines: false))\", which is not a movie id; ids are positive whole numbers."
        )
      }
      ids.append(id)
    }
    return ids
  }
}
