import Domain

/// What the store reports. Each description is one sentence naming the file and what to do.
public enum StoreError: Error, Sendable, CustomStringConvertible, ClassifiedError {
  /// The file was written by a newer build: it is left untouched.
  case newerSchema(file: String, unknownMigrations: [String])
  /// The database could not be opened or used.
  case unusable(file: String, reason: String)

  public var failure: ServiceFailure { .configuration }

  public var description: String {
    switch self {
    case .newerSchema(let file, let unknown):
      "The cache \(file) was written by a newer version of Kernel (it has \(unknown.joined(separator: ", "))"
        + " that this build does not know); it was left untouched: update Kernel, or point --data-dir elsewhere."
    case .unusable(let file, let reason):
      "The cache \(file) could not be used: \(reason)."
    }
  }
}
