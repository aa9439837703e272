import Domain
import Foundation
import Testing

/// A failed file operation is said in the system's words, not Foundation's preamble.
@Suite struct FileSystemReasonTests {
  @Test func aMissingFolderIsSaidAsTheSystemSaysIt() throws {
    let missing = FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-reason-\(UUID().uuidString)/inner")
    do {
      try FileManager.default.createDirectory(at: missing, withIntermediateDirectories: false)
      Issue.record("a folder was made in a folder that does not exist")
    } catch {
      #expect(!"\(error)".isEmpty)
      #expect(fileSystemReason(error) == "No such file or directory", "\(error)")
    }
    #expect(fileSystemReason(POSIXError(.EACCES)) == "Permission denied")
  }
}
