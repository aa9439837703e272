import Domain
import Foundation
import KernelTesting
import Synchronization
import Testing

@testable import Api

/// A body's progress as it is sent over real loopback HTTP: a multipart upload of a file read
/// from disk tells the bytes sent, rising, to the body's whole length.
@Suite(.timeLimit(.minutes(1))) struct UploadProgressTests {
  @Test func anUploadTellsItsProgressUpToTheWholeBody() async throws {
    let folder = try TemporaryDirectory("upload")
    defer { folder.remove() }
    let file = folder.appending("video.bin")
    try Data(repeating: 7, count: 6_000_000).write(to: file)
    let sink = try UploadSink()
    defer { sink.stop() }
    let client = ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "sink", baseURL: sink.baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), retriers: [])
    let told = Mutex<[TransferProgress]>([])
    let body = RequestBody.multipart([.field("title", "Clip"), .file("upload", at: file)])
      .reportingProgress { progress in told.withLock { $0.append(progress) } }
    let length = try body.length()

    let answer = try await client.send(ApiRequest<[String: Int]>(.post("uploads", body: body)))
    #expect(Int64(answer["bytes"] ?? 0) == length)
    let reports = told.withLock { $0 }
    #expect(reports.count >= 2)
    #expect(reports.last == TransferProgress(completed: length, expected: length))
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed })
    #expect(reports.allSatisfy { $0.expected == length })
  }

  @Test func theSameBytesAreTheSameBodyWhoeverHearsThem() {
    let plain = RequestBody.bytes(Data("a".utf8))
    #expect(plain.reportingProgress { _ in } == plain)
  }
}
