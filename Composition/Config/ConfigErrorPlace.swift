extension ConfigError {
  /// The file and key the error names, when it names a key.
  var place: (file: String, key: String)? {
    switch self {
    case .unknownName(let file, let key, _, _), .stackWithoutSource(let file, let key, _, _),
      .malformed(let file, let key, _, _), .invalidEnvironment(let file, let key, _),
      .unknownKey(let file, let key, _, _), .unknownLabel(let file, let key, _, _, _, _),
      .unusable(let file, let key, _):
      (file, key)
    case .syntax, .refused: nil
    }
  }

  /// This error naming `file` and `key` instead.
  func placed(file: String, key: String) -> ConfigError {
    switch self {
    case .unknownName(_, _, let name, let valid):
      .unknownName(file: file, key: key, name: name, valid: valid)
    case .stackWithoutSource(_, _, let stack, let sources):
      .stackWithoutSource(file: file, key: key, stack: stack, sources: sources)
    case .malformed(_, _, let value, let expected):
      .malformed(file: file, key: key, value: value, expected: expected)
    case .invalidEnvironment(_, _, let reason):
      .invalidEnvironment(file: file, key: key, reason: reason)
    case .unknownKey(_, _, let closest, let valid):
      .unknownKey(file: file, key: key, closest: closest, valid: valid)
    case .unknownLabel(_, _, let entry, let label, let closest, let valid):
      .unknownLabel(
        file: file, key: key, entry: entry, label: label, closest: closest, valid: valid)
    case .unusable(_, _, let reason): .unusable(file: file, key: key, reason: reason)
    case .syntax, .refused: self
    }
  }

  /// This error blaming what really gave the value it names: a value a flag or variable gave
  /// (`--retriers bogus`, `KERNEL_ENVIRONMENTS_SAMPLE_BASE_URL`) is that flag's or variable's
  /// fault, never the file's, which may not even hold the key.
  func placed(in config: KernelConfig, prefix: String) -> ConfigError {
    guard let (file, key) = place, file == config.file else { return self }
    if key.hasPrefix("--") { return placed(file: "the command line", key: key) }
    if key.hasPrefix(prefix + "_") { return placed(file: "the environment", key: key) }
    // `retriers[0]`, `profiles.layered.books[1]`, `environments.sample.baseURL`: the setting
    // is the key without its index, or the key in the profile's section.
    let bare = String(key.prefix { $0 != "[" })
    let index = key.dropFirst(bare.count)
    for candidate in [bare, Self.withoutProfile(bare)] {
      guard let setting = config.settings.first(where: { $0.key == candidate }),
        let written = setting.written
      else { continue }
      switch setting.source {
      case .flag, .variable: return placed(file: written.file, key: written.key + index)
      case .profile, .file, .builtInDefault: return self
      }
    }
    return self
  }

  /// `books` for `profiles.layered.books`; the key itself otherwise.
  private static func withoutProfile(_ key: String) -> String {
    let levels = key.split(separator: ".")
    guard levels.count > 2, levels[0] == "profiles" else { return key }
    return levels.dropFirst(2).joined(separator: ".")
  }
}
