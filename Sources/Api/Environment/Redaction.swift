/// What of a URL may be shown: everything but its user info (a user name can be a token, as in
/// `https://ghp_x@host/api/`) and the values of its query (`?api_key=…`). Works on text that does
/// not parse as a URL too, since a bad base URL is printed in the error that refuses it.
///
/// Every place that shows a URL to a person (`config show`, `env list`, `env use`, the `-v`
/// trace, config and environment errors) goes through `url(_:)`.
package enum Redaction {
  /// What stands in for a secret.
  public static let placeholder = "REDACTED"

  /// `text` with the user info replaced (`https://REDACTED@host/`), each query value replaced
  /// (`?api_key=REDACTED&page=REDACTED`; a query item without `=` whole) and a fragment replaced
  /// (`#REDACTED`: `#token=…` is how some services hand out a token).
  ///
  /// The user info runs from the scheme to the first `@` followed by a host (`127.0.0.1:9`,
  /// `[::1]`, `api.example`) up to the path, whatever it holds before: a password may hold `/`,
  /// `?`, `#` or `@`, which a parser would take for the start of a path, query or fragment. A
  /// URL without user info whose path holds an `@` is redacted up to it: more than needed,
  /// never less.
  public static func url(_ text: String) -> String { url(text) { _ in true } }

  /// `text` redacted as `url(_:)` does, but only the values of the query items `isSecret`
  /// names: what a trace shows (`RequestTrace`), where `?page=2` is worth seeing.
  public static func url(_ text: String, isSecret: (String) -> Bool) -> String {
    var rest = Substring(text)
    var shown = ""
    if let scheme = rest.range(of: "://") {
      shown += rest[..<scheme.upperBound]
      rest = rest[scheme.upperBound...]
    }
    if let at = userInfoEnd(rest) {
      shown += placeholder
      rest = rest[at...]
    }
    let queryStart = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) ?? rest.endIndex
    shown += rest[..<queryStart]
    var tail = rest[queryStart...]
    if tail.first == "?" {
      let fragmentStart = tail.firstIndex(of: "#") ?? tail.endIndex
      let items = tail[tail.index(after: tail.startIndex)..<fragmentStart]
        .split(separator: "&", omittingEmptySubsequences: false)
        .map { item -> String in
          if item.isEmpty { return "" }
          guard let equals = item.firstIndex(of: "=") else {
            return isSecret(String(item)) ? placeholder : String(item)
          }
          let name = String(item[..<equals])
          let decoded = name.removingPercentEncoding ?? name
          return isSecret(decoded) ? item[...equals] + placeholder : String(item)
        }
      shown += "?" + items.joined(separator: "&")
      tail = tail[fragmentStart...]
    }
    if tail.count > 1 { shown += "#" + placeholder } else { shown += tail }
    return shown
  }

  /// The `@` that ends the user info of `authorityAndAfter`: the first one followed by a host up
  /// to the path or the end; the last `@` when none is.
  private static func userInfoEnd(_ authorityAndAfter: Substring) -> Substring.Index? {
    let hostCharacters = Set(
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]%")
    var index = authorityAndAfter.startIndex
    while let at = authorityAndAfter[index...].firstIndex(of: "@") {
      let after = authorityAndAfter[authorityAndAfter.index(after: at)...]
      let host = after.prefix { $0 != "/" }
      if !host.isEmpty, host.allSatisfy(hostCharacters.contains) { return at }
      index = authorityAndAfter.index(after: at)
    }
    return authorityAndAfter.lastIndex(of: "@")
  }
}
