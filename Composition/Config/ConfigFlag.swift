/// A config key as a flag, by swift-configuration's convention for its
/// `CommandLineArgumentsProvider`: the key's levels and camel-case words in lower case joined by
/// `-` (`timeouts.callSeconds` → `--timeouts-call-seconds`; an app's `perPage` → `--per-page`).
/// A test checks the provider reads every key of the table by the name given here.
package enum ConfigFlag {
  /// `--timeouts-call-seconds` for `["timeouts", "callSeconds"]`.
  public static func name(_ key: [String]) -> String {
    "--" + key.map { words($0, "-").lowercased() }.joined(separator: "-")
  }

  /// The variable that sets `key`: `KERNEL_TIMEOUTS_CALL_SECONDS`.
  public static func variable(_ key: [String], prefix: String) -> String {
    ([prefix] + key.map { words($0, "_") }).joined(separator: "_").uppercased()
  }

  /// `callSeconds` → `call-Seconds`: `separator` before each capital that follows a lower-case
  /// letter.
  static func words(_ part: String, _ separator: Character) -> String {
    var out = ""
    var previousIsLowercase = false
    for character in part {
      let (lower, upper) = cases(of: character)
      if previousIsLowercase, upper { out.append(separator) }
      out.append(character)
      previousIsLowercase = lower
    }
    return out
  }

  /// Whether `character` is lower-case and whether it is upper-case, an ASCII letter by its
  /// byte: `Character.isLowercase` looks up Unicode's tables for every letter, and the
  /// settings' keys, turned into flags at every start, are nearly all ASCII.
  private static func cases(of character: Character) -> (lower: Bool, upper: Bool) {
    guard let ascii = character.asciiValue else {
      return (character.isLowercase, character.isUppercase)
    }
    return ((0x61...0x7A).contains(ascii), (0x41...0x5A).contains(ascii))
  }
}
