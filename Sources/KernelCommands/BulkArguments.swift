import Domain
import Foundation

/// Many numeric arguments on a command line (`books get 1 2 3 …`), parsed in linear time.
///
/// ArgumentParser's parsing of a long list of positional values is quadratic (8,000 ids took
/// 32 s), so before it runs, the plain numbers after `command` are taken out of the arguments
/// in one pass and handed to the command through `current`. For bulk use, a command can also
/// read them from standard input (`-`, see `resolve`).
public struct BulkArguments: Sendable {
  /// The command's words: `["books", "get"]`.
  public var command: [String]
  /// The command's own options that take a value as the next argument, which is therefore
  /// never one of the numbers (the global ones are known).
  public var optionsWithValues: Set<String>

  /// The numbers after `command`, whose own `optionsWithValues` take the next argument.
  public init(command: [String], optionsWithValues: Set<String> = []) {
    self.command = command
    self.optionsWithValues = optionsWithValues
  }

  /// The numbers taken out of the command line for the command being run; nil when it is not
  /// one that takes them.
  @TaskLocal public static var current: [String]?

  /// `arguments` without the plain numbers that follow the command, and those numbers in their
  /// order; nil when the command is not this one.
  func split(_ arguments: [String]) -> (arguments: [String], numbers: [String]?) {
    let withValues = optionsWithValues.union(GlobalOptions.withValues)
    var words: [String] = []
    var kept: [String] = []
    var numbers: [String] = []
    kept.reserveCapacity(arguments.count)
    var takesValue = false
    var afterTerminator = false
    for argument in arguments {
      defer { takesValue = !afterTerminator && withValues.contains(argument) }
      if words == command && !takesValue && Self.isNumber(argument) {
        numbers.append(argument)
        continue
      }
      kept.append(argument)
      if argument == "--" { afterTerminator = true }
      if !takesValue && words.count < command.count
        && (afterTerminator || !argument.hasPrefix("-"))
      {
        words.append(argument)
      }
    }
    return words == command ? (kept, numbers) : (arguments, nil)
  }

  private static func isNumber(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 18 && text.utf8.allSatisfy { (0x30...0x39).contains($0) }
  }

  /// `given` as positive numbers, with `-` replaced by those read from standard input;
  /// `noun` names them in a usage error ("Book ids are positive whole numbers; x is not one.").
  public static func resolve(_ given: [String], noun: String) throws -> [Int] {
    var ids: [Int] = []
    ids.reserveCapacity(given.count)
    for text in given {
      if text == "-" {
        ids += try standardInput(noun: noun)
      } else if let id = Int(text), id > 0 {
        ids.append(id)
      } else {
        let first = noun.openingASentence
        throw UsageError("\(first)s are positive whole numbers; \(text) is not one.")
      }
    }
    guard !ids.isEmpty else {
      throw UsageError(
        "Standard input held no \(noun)s; give them separated by spaces or lines.")
    }
    return ids
  }

  /// The most ids standard input may hold.
  public static let maximumFromInput = 1_000_000

  /// The numbers on standard input, separated by spaces, commas or newlines. Checked as it is
  /// read, a chunk at a time: the first byte that cannot be part of an id is refused at once
  /// (`- </dev/zero` fails on its first byte instead of reading gigabytes), and only the id
  /// being read is buffered.
  private static func standardInput(noun: String) throws -> [Int] {
    try numbers(from: { FileHandle.standardInput.readData(ofLength: 64 << 10) }, noun: noun)
  }

  /// The numbers `read` hands over, chunk by chunk until it returns no data.
  static func numbers(from read: () throws -> Data, noun: String) throws -> [Int] {
    var ids: [Int] = []
    var digits: [UInt8] = []
    func endOfId() throws {
      guard !digits.isEmpty else { return }
      defer { digits.removeAll(keepingCapacity: true) }
      guard let id = Int(String(decoding: digits, as: UTF8.self)), id > 0 else {
        throw UsageError(
          "Standard input holds \(String(decoding: digits, as: UTF8.self)), which is not a \(noun);"
            + " ids are positive whole numbers.")
      }
      guard ids.count < maximumFromInput else {
        throw UsageError(
          "Standard input holds more than \(maximumFromInput) \(noun)s; give fewer at a time.")
      }
      ids.append(id)
    }
    while true {
      let chunk = try read()
      if chunk.isEmpty { break }
      for (offset, byte) in chunk.enumerated() {
        switch byte {
        case 0x30...0x39:
          digits.append(byte)
          if digits.count > 18 {
            let shown = String(decoding: digits.prefix(18), as: UTF8.self)
            throw UsageError(
              "Standard input holds \(shown)…, too long for a \(noun); ids are positive whole numbers."
            )
          }
        case 0x20, 0x09, 0x0A, 0x0D, 0x2C: try endOfId()
        default:
          // The word it is in, as far as this chunk holds it (40 bytes at most), names it.
          let rest = chunk.dropFirst(offset).prefix(40).prefix {
            ![0x20, 0x09, 0x0A, 0x0D, 0x2C].contains($0)
          }
          let shown = TerminalText.escaped(
            String(decoding: digits + rest, as: UTF8.self), keepingNewlines: false)
          throw UsageError(
            "Standard input holds \"\(shown)\", which is not a \(noun); ids are positive whole numbers."
          )
        }
      }
    }
    try endOfId()
    return ids
  }
}
