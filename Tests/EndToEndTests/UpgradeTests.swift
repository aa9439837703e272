import Foundation
import KernelTesting
import Testing

/// A user's data folder made by an earlier Kernel (`Fixtures/kept-writes`, by
/// `scripts/make-upgrade-fixture`: two ratings of movie 3 and a conditional rating of movie 4
/// kept offline, their edits pending) opened by this one: every kept write is still kept, in
/// its order and with its `If-Match`, every edit still shown, and a sync sends them all.
@Suite(.timeLimit(.minutes(5))) struct UpgradeTests {
  @Test func keptWritesAndPendingEditsOfAnEarlierKernelAreNeverLost() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let fixture = Snippets.repositoryRoot().appendingPathComponent(
      "Tests/EndToEndTests/Fixtures/kept-writes")
    try FileManager.default.createDirectory(
      at: kernel.dataDirectory, withIntermediateDirectories: true,
      attributes: [.posixPermissions: 0o700])
    for file in ["cache.sqlite", "outbox.sqlite"] {
      try FileManager.default.copyItem(
        at: fixture.appendingPathComponent(file),
        to: kernel.dataDirectory.appendingPathComponent(file))
    }
    let offline = ["--profile", "offline"]
    let listed = try await kernel.run(offline + ["outbox", "list", "--format", "json"])
    let writes = try #require(listed.json?["writes"] as? [[String: Any]], "\(listed)")
    #expect(writes.compactMap { $0["id"] as? Int } == [1, 2, 3])
    #expect(writes.compactMap { $0["state"] as? String } == ["pending", "pending", "pending"])
    #expect(writes.last?["ifMatch"] as? String != nil, "\(writes)")

    for (id, rating) in [(3, 90.0), (4, 70.0)] {
      let got = try await kernel.run(offline + ["movies", "get", "\(id)", "--format", "json"])
      let movie = (got.json?["movies"] as? [[String: Any]])?.first
      #expect((movie?["rating"] as? NSNumber)?.doubleValue == rating, "\(got)")
      #expect(got.json?["origin"] as? String == "pending", "\(got)")
    }

    // Online (the sample api in process): all three are sent, none twice, none left.
    let synced = try await kernel.run(["outbox", "sync", "--format", "json"])
    #expect(synced.status == 0, "\(synced)")
    let left = try await kernel.run(offline + ["outbox", "list", "--format", "json"])
    #expect((left.json?["writes"] as? [Any])?.isEmpty == true, "\(left)")
  }
}
