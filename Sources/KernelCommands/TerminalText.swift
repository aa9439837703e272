/// Text from outside (the network, a config file) made safe to show on a terminal.
public enum TerminalText {
  /// `text` with every control character written as `\x1B` (C0, DEL, C1) and the bidirectional
  /// overrides that can reorder what a person reads written as `\u{202E}`; newlines are kept
  /// unless `keepingNewlines` is false, as in a table's cell. Tabs are kept.
  public static func escaped(_ text: String, keepingNewlines: Bool = true) -> String {
    guard text.unicodeScalars.contains(where: { needsEscape($0, keepingNewlines) }) else {
      return text
    }
    var out = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard needsEscape(scalar, keepingNewlines) else {
        out.append(scalar)
        continue
      }
      let hex = String(scalar.value, radix: 16, uppercase: true)
      let shown = scalar.value < 0x100 ? "\\x" + (hex.count < 2 ? "0" + hex : hex) : "\\u{\(hex)}"
      out.append(contentsOf: shown.unicodeScalars)
    }
    return String(out)
  }

  private static func needsEscape(_ scalar: Unicode.Scalar, _ keepingNewlines: Bool) -> Bool {
    switch scalar.value {
    case 0x0A: !keepingNewlines
    case 0x09: false
    case 0x00...0x1F, 0x7F...0x9F: true
    case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
  }
}
