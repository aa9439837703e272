/// A config key as a flag, by swift-configuration's convention for its
/// `CommandLineArgumentsProvider`: the key's levels and camel-case words in lower case joined by
/// `-` (`timeouts.callSeconds` → `--timeouts-call-seconds`; an app's `perPage` → `--per-page`).
/// A test checks the provider reads every key of the table by the name given here.
public enum ConfigFlag {
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
    var previous: Character?
    for character in part {
      if let previous, previous.isLowercase, character.isUppercase { out.append(separator) }
      out.append(character)
      previous = character
    }
    return out
  }
}
