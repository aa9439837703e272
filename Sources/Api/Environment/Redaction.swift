/// What of a URL may be shown: everything but its user info (a user name can be a token, as in
/// `https://ghp_x@host/api/`) and the values of its query (`?api_key=…`). Works on text that does
/// not parse as a URL too, since a bad base URL is printed in the error that refuses it.
///
/// Every place that shows a URL to a person (`config show`, `env list`, `env use`, the `-v`
/// trace, config and environment errors) goes through `url(_:)`.
public enum Redaction {
  /// What stands in for a secret.
  public static let placeholder = "REDACTED"

  /// `text` with the user info replaced (`https://REDACTED@host/`) and each query value
  /// replaced (`?api_key=REDACTED&page=REDACTED`); a query item without `=` is replaced whole.
  public static func url(_ text: String) -> String {
    let queryStart = text.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? text.endIndex
    var head = Substring(text[..<queryStart])
    var shown = ""
    if let scheme = head.range(of: "://") {
      shown += head[..<scheme.upperBound]
      head = head[scheme.upperBound...]
    }
    // The last `@` before the query ends the user info, even where a password holds a `/`.
    if let at = head.lastIndex(of: "@") {
      shown += placeholder
      head = head[at...]
    }
    shown += head
    let tail = text[queryStart...]
    guard tail.first == "?" else { return shown + tail }
    let fragmentStart = tail.firstIndex(of: "#") ?? tail.endIndex
    let items = tail[tail.index(after: tail.startIndex)..<fragmentStart]
      .split(separator: "&", omittingEmptySubsequences: false)
      .map { item -> String in
        if item.isEmpty { return "" }
        guard let equals = item.firstIndex(of: "=") else { return placeholder }
        return item[...equals] + placeholder
      }
    return shown + "?" + items.joined(separator: "&") + tail[fragmentStart...]
  }
}
