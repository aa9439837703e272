extension Container {
  /// The error for a key nothing is registered under: an argument mismatch when the type and tag
  /// are registered with other arguments, else "not found" with the closest registered keys.
  @usableFromInline
  func missing(_ key: Key, path: [String]) -> InjectionError {
    if let deferred = key.type as? any Deferred.Type,
      ObjectIdentifier(key.arguments) != ObjectIdentifier(Void.self)
    {
      return .deferredWithArguments(
        service: Key(key.type, tag: key.tag).description,
        wrapped: Key(deferred.wrappedType, tag: key.tag).typeName, given: key.signature)
    }
    let visible = visibleDefinitions.map(\.key)
    let sameService = visible.filter { $0.sameService(as: key) }
    if !sameService.isEmpty {
      return .argumentMismatch(
        service: Key(key.type, tag: key.tag).description, given: key.signature,
        registered: sameService.map(\.signature).sorted(), path: path)
    }
    return .definitionNotFound(
      service: key.description, path: path, closest: closest(to: key, in: visible))
  }

  /// Up to three registered keys a person may have meant: the same type under another tag, then
  /// type names within a small edit distance.
  private func closest(to key: Key, in visible: [Key]) -> [String] {
    let wanted = key.typeName.lowercased()
    let scored = visible.map { candidate -> (Key, Int) in
      if ObjectIdentifier(candidate.type) == ObjectIdentifier(key.type) { return (candidate, 0) }
      return (candidate, editDistance(wanted, candidate.typeName.lowercased()))
    }
    let limit = max(2, wanted.count / 3)
    return scored.filter { $0.1 <= limit }.sorted {
      ($0.1, $0.0.description) < ($1.1, $1.0.description)
    }
    .prefix(3).map(\.0.description)
  }
}

/// Levenshtein distance between two strings, by characters. `package`: the config loader
/// suggests the closest valid key with it too.
package func editDistance(_ a: String, _ b: String) -> Int {
  let a = Array(a)
  let b = Array(b)
  if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
  var previous = Array(0...b.count)
  for (i, ca) in a.enumerated() {
    var current = [i + 1] + Array(repeating: 0, count: b.count)
    for (j, cb) in b.enumerated() {
      current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (ca == cb ? 0 : 1))
    }
    previous = current
  }
  return previous[b.count]
}

/// The candidate a person most likely meant by `name` (case-insensitive, within half of its
/// length in edits), if any.
package func closestName(to name: String, in candidates: [String]) -> String? {
  let wanted = name.lowercased()
  let limit = max(2, wanted.count / 2)
  return candidates.map { ($0, editDistance(wanted, $0.lowercased())) }
    .filter { $0.1 <= limit }
    .min { ($0.1, $0.0) < ($1.1, $1.0) }?.0
}
