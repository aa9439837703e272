/// A stack as the config writes it: a list of entries, outermost layer first, ending in a source.
enum StackEntry {
  /// The entries as written: a YAML flow list (`[cache(cacheFirst, 300), api]`) splits an
  /// entry's arguments at their comma, so pieces are joined again until parentheses balance.
  static func rejoined(_ pieces: [String]) -> [String] {
    var entries: [String] = []
    var open = false
    for piece in pieces {
      if open, let last = entries.popLast() {
        entries.append(last + ", " + piece.trimmingSpaces())
      } else {
        entries.append(piece)
      }
      let text = entries[entries.count - 1]
      open = text.filter { $0 == "(" }.count > text.filter { $0 == ")" }.count
    }
    return entries
  }
}
