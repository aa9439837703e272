import Domain
import Foundation
import KernelTesting
import SampleApi
import Synchronization
import Testing

@testable import Api

/// Alamofire's download, stream and progress tests that Kernel's API can express, ported over
/// real loopback HTTP (`DownloadTests`, `DataStreamTests`): where Kernel chose differently, the
/// test says what it does instead.
@Suite(.timeLimit(.minutes(1))) struct AlamofireDownloadParityTests {
  private static func client(_ baseURL: URL) throws -> ApiClient {
    ApiClient(
      context: InMemoryApiContext(environment: try ApiEnvironment(name: "local", baseURL: baseURL)),
      transport: PlatformTransport(configuration: .loopbackTests), retriers: [])
  }

  /// `testDownloadRequest`: the body lands at the destination, with the answer's status.
  @Test func aDownloadLandsAtItsDestination() async throws {
    let folder = try TemporaryDirectory("parity")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 100_000))
    let file = folder.appending("file.bin")
    let response = try await Self.client(source.baseURL).download(.get("bytes"), to: file)
    #expect(response.status == 200)
    #expect(try Data(contentsOf: file) == source.body())
  }

  /// `testDownloadRequestWithProgress`: progress rises, the fraction ends at 1.
  @Test func downloadProgressRisesToOne() async throws {
    let folder = try TemporaryDirectory("parity")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 4_000_000))
    let told = Mutex<[TransferProgress]>([])
    _ = try await Self.client(source.baseURL).download(
      .get("bytes"), to: folder.appending("file.bin")
    ) { progress in told.withLock { $0.append(progress) } }
    let fractions = told.withLock { $0 }.compactMap(\.fraction)
    #expect(fractions.first == 0)
    #expect(fractions.last == 1)
    #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 })
  }

  /// `testThatDownloadingFileAndMovingToDirectoryThatDoesNotExistThrowsError`: the same, and
  /// nothing is made; Kernel has no `.createIntermediateDirectories` option (an app makes its
  /// folder).
  @Test func aDestinationInAFolderThatDoesNotExistIsAnError() async throws {
    let folder = try TemporaryDirectory("parity")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 1_000))
    let file = folder.appending("missing/file.bin")
    let error = await apiError {
      try await Self.client(source.baseURL).download(.get("bytes"), to: file)
    }
    guard case .output(_, _, let reason, _) = error else {
      Issue.record("expected an output error, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("its folder \(folder.appending("missing").path) does not exist"))
    #expect(error?.failure == .output)
    #expect(!FileManager.default.fileExists(atPath: file.deletingLastPathComponent().path))
  }

  /// `testThatDownloadingFileAndMovingToDestinationThatIsOccupiedThrowsError`: chosen
  /// differently. Alamofire fails unless told `.removePreviousFile`; Kernel replaces the file
  /// in one rename, so a reader sees the old file or the new one, never a mix.
  @Test func anOccupiedDestinationIsReplacedWhole() async throws {
    let folder = try TemporaryDirectory("parity")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 10_000))
    let file = folder.appending("file.bin")
    try Data("old".utf8).write(to: file)
    _ = try await Self.client(source.baseURL).download(.get("bytes"), to: file)
    #expect(try Data(contentsOf: file) == source.body())
  }

  /// Alamofire writes an error status's body to the destination unless the request is
  /// validated; Kernel validates always: a 404 is `ApiError.status` with its body, and nothing
  /// is written.
  @Test func anErrorStatusIsNotWrittenToTheFile() async throws {
    let folder = try TemporaryDirectory("parity")
    defer { folder.remove() }
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let file = folder.appending("file.bin")
      let error = await apiError {
        try await Self.client(server.baseURL).download(.get("movies/999/poster"), to: file)
      }
      guard case .status(let failure) = error else {
        Issue.record("expected a status error, got \(String(describing: error))")
        return
      }
      #expect(failure.status == 404)
      #expect(!FileManager.default.fileExists(atPath: file.path))
      #expect(!FileManager.default.fileExists(atPath: folder.appending(".file.bin.partial").path))
    }
  }

  /// `DataStreamTests.testThatDataCanBeStreamedManyTimes`: every byte arrives, in order.
  @Test func everyByteOfAStreamArrivesInOrder() async throws {
    let source = try DownloadSource(DownloadSource.Settings(length: 5_000_000))
    let streamed = try await Self.client(source.baseURL).stream(.get("bytes"))
    var received = Data()
    for try await chunk in streamed.body { received.append(chunk) }
    #expect(received == source.body())
  }

  /// `DataStreamTests` with validation: an error status fails the call before any chunk, with
  /// the status and its body (Alamofire streams the error body and fails at validation).
  @Test func aStreamOfAnErrorStatusFailsBeforeItsBody() async throws {
    try await withFixtureServer(routes: .sampleMovies()) { server in
      let error = await apiError {
        try await Self.client(server.baseURL).stream(.get("movies/999"))
      }
      guard case .status(let failure) = error else {
        Issue.record("expected a status error, got \(String(describing: error))")
        return
      }
      #expect(failure.status == 404)
      #expect(String(decoding: failure.body, as: UTF8.self).contains("no movie with id 999"))
    }
  }
}
