import Foundation

/// A directory of its own under the system's temporary directory: a data dir for a composed
/// container, a home for a process. Removed by `remove()`, or use `withTemporaryDirectory`.
public struct TemporaryDirectory: Sendable {
  /// Where it is.
  public let url: URL

  /// Creates `kernel-<label>-<uuid>` (mode 0700, as Kernel's data dirs are).
  public init(_ label: String = "test") throws {
    url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "kernel-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(
      at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
  }

  /// A path inside it (not created).
  public func appending(_ name: String) -> URL { url.appendingPathComponent(name) }

  /// Removes it and everything in it.
  public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// Runs `body` with a fresh temporary directory and removes it afterwards, whatever happens.
public func withTemporaryDirectory<R>(
  _ label: String = "test", _ body: (TemporaryDirectory) async throws -> R
) async throws -> R {
  let directory = try TemporaryDirectory(label)
  defer { directory.remove() }
  return try await body(directory)
}
