import Domain
import Foundation
import KernelTesting
import SampleApi
import Synchronization
import Testing

@testable import Api

/// `ApiClient.download` over real loopback HTTP: the body streamed to a partial file beside
/// the destination, resumed with `Range` and `If-Range`, started over when the server answers
/// 200 or the validator changed, refused when it is not the length announced, with progress
/// and authentication on the way.
@Suite(.timeLimit(.minutes(1))) struct DownloadTests {
  static let length = 3_000_000

  private static func client(_ source: DownloadSource, retriers: [any RequestRetrier] = [])
    throws -> ApiClient
  {
    let environment = try ApiEnvironment(name: "local", baseURL: source.baseURL)
    return ApiClient(
      context: InMemoryApiContext(environment: environment),
      transport: PlatformTransport(configuration: .loopbackTests),
      retriers: retriers)
  }

  /// Starts a download of `source` to `file`, waits until the server holds it mid-body, and
  /// cancels it: a try cut short, its partial file left behind.
  private static func cutShort(
    _ source: DownloadSource, to file: URL, route: Route = .get("poster")
  ) async throws {
    let client = try client(source)
    let task = Task { try await client.download(route, to: file) }
    await source.held()
    task.cancel()
    _ = await task.result
    source.release()
  }

  @Test func aDownloadCutShortAsksForTheRestOnlyAndMatchesTheBody() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try await Self.cutShort(source, to: file)
    #expect(!FileManager.default.fileExists(atPath: file.path))
    let partial = PartialDownload(destination: file, progress: nil)
    #expect(partial.offset == Int64(Self.length / 2))

    let response = try await Self.client(source).download(.get("poster"), to: file)
    #expect(response.status == 206)
    #expect(response.value == file)
    #expect(source.requests.last?["range"] == "bytes=\(Self.length / 2)-")
    #expect(source.requests.last?["if-range"] == "\"v1\"")
    #expect(Double(source.bytesSent) <= 1.1 * Double(Self.length))
    #expect(try Data(contentsOf: file) == source.body())
    #expect(!FileManager.default.fileExists(atPath: partial.partial.path))
    #expect(!FileManager.default.fileExists(atPath: partial.validatorFile.path))
  }

  @Test func aTryCutShortIsRetriedFromWhereItStoppedWithinOneCall() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.dropAfter = Self.length / 2
    let source = try DownloadSource(settings)
    let environment = try ApiEnvironment(name: "local", baseURL: source.baseURL)
    let client = ApiClient(
      context: InMemoryApiContext(environment: environment),
      transport: PlatformTransport(configuration: .loopbackTests),
      retriers: [.backoff], clock: TestClock(immediate: true))
    let file = folder.appending("poster.bin")

    let response = try await client.download(.get("poster"), to: file)
    #expect(response.status == 206)
    #expect(source.requests.count == 2)
    #expect(source.requests.last?["range"]?.hasPrefix("bytes=") == true)
    #expect(Double(source.bytesSent) <= 1.1 * Double(Self.length))
    #expect(try Data(contentsOf: file) == source.body())
  }

  @Test func aChangedETagStartsOver() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 3
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try await Self.cutShort(source, to: file)
    source.update { $0.etag = "\"v2\"" }

    let response = try await Self.client(source).download(.get("poster"), to: file)
    #expect(source.requests.last?["if-range"] == "\"v1\"")
    #expect(response.status == 200)
    #expect(response.validators.etag == "\"v2\"")
    #expect(try Data(contentsOf: file) == source.body())
  }

  @Test func aWholeBodyAnsweringARangeStartsOver() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 3
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try await Self.cutShort(source, to: file)
    source.update { $0.honoursRange = false }

    let response = try await Self.client(source).download(.get("poster"), to: file)
    #expect(source.requests.last?["range"] != nil)
    #expect(response.status == 200)
    // Written from the start, not after the bytes already there.
    #expect(try Data(contentsOf: file) == source.body())
  }

  @Test func aBodyOfAnotherLengthThanAnnouncedIsRefusedAndNothingIsPutInPlace() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 3
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try Data("the old poster".utf8).write(to: file)
    try await Self.cutShort(source, to: file)
    source.update { $0.announcedTotal = Self.length + 1 }

    let error = await apiError { try await Self.client(source).download(.get("poster"), to: file) }
    guard case .download(_, let path, let reason) = error else {
      Issue.record("expected a download error, got \(String(describing: error))")
      return
    }
    #expect(path == file.path)
    #expect(reason.contains("announced \(Self.length + 1) bytes"))
    #expect(try Data(contentsOf: file) == Data("the old poster".utf8))
    let partial = PartialDownload(destination: file, progress: nil)
    #expect(!FileManager.default.fileExists(atPath: partial.partial.path))
  }

  @Test func progressRisesToTheTotalFromWhereAResumeStarts() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 4
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try await Self.cutShort(source, to: file)
    let held = PartialDownload(destination: file, progress: nil).offset
    #expect(held > 0)

    let told = Mutex<[TransferProgress]>([])
    _ = try await Self.client(source).download(.get("poster"), to: file) { progress in
      told.withLock { $0.append(progress) }
    }
    let reports = told.withLock { $0 }
    let total = Int64(Self.length)
    #expect(reports.first == TransferProgress(completed: held, expected: total))
    #expect(reports.last == TransferProgress(completed: total, expected: total))
    #expect(zip(reports, reports.dropFirst()).allSatisfy { $0.completed <= $1.completed })
    #expect(reports.allSatisfy { $0.expected == total })
  }

  @Test func aRefusedCredentialMidDownloadIsRefreshedOnceAndTheDownloadResumes() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    let clock = TestClock()
    var options = SampleApiResponder.Options()
    options.requireAuth = true
    options.clock = clock
    var oauth = OAuthServer()
    oauth.accessTokenLifetime = .seconds(600)
    options.oauth = oauth
    try await withFixtureServer(routes: .sampleMovies(posterBytes: Self.length), options: options) {
      server in
      let environment = try ApiEnvironment(name: "local", baseURL: server.baseURL)
      let client = ApiClient(
        context: InMemoryApiContext(environment: environment),
        transport: PlatformTransport(configuration: .loopbackTests),
        authentication: AuthenticationInterceptor(
          OAuth2Authenticator(grant: .password, clientId: "kernel"), name: "oauth2",
          wallClock: TestWallClock().wallClock))
      try await client.login(Login(username: "u", password: "pw"))
      // A third of the poster arrived under a token that has expired since.
      let file = folder.appending("poster.bin")
      let partial = PartialDownload(destination: file, progress: nil)
      try SampleRange.bytes(0, Self.length / 3, of: 1).write(to: partial.partial)
      try partial.writeRecord(
        .init(
          url: server.baseURL.absoluteString + "movies/1/poster",
          validator: "\"poster-1-\(Self.length)\""))
      clock.advance(by: .seconds(601))

      let response = try await client.download(.get("movies/1/poster"), to: file)
      #expect(response.status == 206)
      #expect(server.responder.grants("refresh_token") == 1)
      #expect(try Data(contentsOf: file) == SampleRange.bytes(0, Self.length, of: 1))
    }
  }

  @Test func aPartialFileLeftByAnotherURLIsStartedOverNotContinued() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let source = try DownloadSource(settings)
    let file = folder.appending("poster.bin")
    try await Self.cutShort(source, to: file, route: .get("movies/3/poster"))
    #expect(PartialDownload(destination: file, progress: nil).offset > 0)

    // The same ETag, the same destination, another resource: nothing of movie 3's is kept.
    let response = try await Self.client(source).download(.get("movies/4/poster"), to: file)
    #expect(response.status == 200)
    #expect(source.requests.last?["range"] == nil)
    #expect(source.requests.last?["if-range"] == nil)
    #expect(try Data(contentsOf: file) == source.body())
  }

  @Test func aSecondDownloadOfTheSameFileIsRefusedWhileTheFirstWritesIt() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let first = try DownloadSource(settings)
    let second = try DownloadSource(DownloadSource.Settings(length: 1000))
    let file = folder.appending("poster.bin")
    let firstClient = try Self.client(first)
    let running = Task { try await firstClient.download(.get("poster"), to: file) }
    await first.held()

    let error = await apiError { try await Self.client(second).download(.get("poster"), to: file) }
    guard case .output(_, let path, let reason, _) = error else {
      Issue.record("expected an output error, got \(String(describing: error))")
      return
    }
    #expect(path == file.path)
    #expect(reason.contains("another download of it is under way"))
    #expect(second.requests.isEmpty)
    first.release()
    #expect(try await running.value.status == 200)
    #expect(try Data(contentsOf: file) == first.body())
  }

  /// A write the disk refuses carries the system's error as a value, not only its words:
  /// `/dev/full` refuses every write as a full disk does.
  @Test func aWriteTheDiskRefusesCarriesTheSystemsErrorTyped() async throws {
    let source = try DownloadSource(DownloadSource.Settings(length: 10_000))
    let full = URL(fileURLWithPath: "/dev/full")
    let error = await apiError { try await Self.client(source).download(.get("poster"), to: full) }
    guard case .output(_, let path, let reason, _) = error else {
      Issue.record("expected an output error, got \(String(describing: error))")
      return
    }
    #expect(path == "/dev/full")
    #expect(reason == "it cannot be written (No space left on device)")
    #expect((error?.underlyingError as? POSIXError)?.code == .ENOSPC)
    #expect(error?.failure == .output)
  }

  @Test func aPlantedLinkAtThePartialFileOrTheRecordIsNeverWrittenThrough() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 10_000))
    let file = folder.appending("poster.bin")
    let victim = folder.appending("victim.txt")
    try Data("mine".utf8).write(to: victim)
    let paths = PartialDownload(destination: file, progress: nil)
    try FileManager.default.createSymbolicLink(at: paths.partial, withDestinationURL: victim)

    let error = await apiError { try await Self.client(source).download(.get("poster"), to: file) }
    guard case .output(_, _, let reason, _) = error else {
      Issue.record("expected an output error, got \(String(describing: error))")
      return
    }
    #expect(reason.contains("is not a partial file a download made (it is a symbolic link)"))
    #expect(source.requests.isEmpty)
    #expect(try Data(contentsOf: victim) == Data("mine".utf8))
    #expect(!FileManager.default.fileExists(atPath: file.path))

    // A link where the record goes is replaced by the record, never written through.
    try FileManager.default.removeItem(at: paths.partial)
    try FileManager.default.createSymbolicLink(at: paths.validatorFile, withDestinationURL: victim)
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    try await Self.cutShort(try DownloadSource(settings), to: file)
    #expect(try Data(contentsOf: victim) == Data("mine".utf8))
    #expect(paths.readRecord()?.validator == "\"v1\"")
  }

  @Test func aDestinationThatIsALinkOrAFolderIsRefusedAndADeviceIsWrittenInPlace() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    let source = try DownloadSource(DownloadSource.Settings(length: 10_000))
    let victim = folder.appending("victim.txt")
    try Data("mine".utf8).write(to: victim)
    let link = folder.appending("link.bin")
    try FileManager.default.createSymbolicLink(at: link, withDestinationURL: victim)

    for (destination, said) in [(link, "is a symbolic link to"), (folder.url, "is a folder")] {
      let error = await apiError {
        try await Self.client(source).download(.get("poster"), to: destination)
      }
      #expect(error?.failure == .output, "\(String(describing: error))")
      #expect("\(String(describing: error))".contains(said))
    }
    #expect(source.requests.isEmpty)
    #expect(try Data(contentsOf: victim) == Data("mine".utf8))

    let null = URL(filePath: "/dev/null")
    let response = try await Self.client(source).download(.get("poster"), to: null)
    #expect(response.status == 200)
    var info = stat()
    #expect(lstat("/dev/null", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    #expect(!FileManager.default.fileExists(atPath: "/dev/.null.partial"))
  }

  /// A download that falls silent ends once `stallTimeout` passes on the transport's clock, as
  /// the clock says and not five seconds of libcurl's averaging later; advancing a test clock
  /// ends it, with no wall time waited.
  @Test func aSilentDownloadEndsOnceTheStallLimitPassesOnTheTransportsClock() async throws {
    let folder = try TemporaryDirectory("download")
    defer { folder.remove() }
    var settings = DownloadSource.Settings(length: Self.length)
    settings.holdAfter = Self.length / 2
    let source = try DownloadSource(settings)
    defer { source.release() }
    let clock = TestClock()
    var configuration = CurlTransport.Configuration()
    configuration.stallTimeout = .seconds(1)
    let client = ApiClient(
      context: InMemoryApiContext(
        environment: try ApiEnvironment(name: "local", baseURL: source.baseURL)),
      transport: CurlTransport(configuration: configuration, clock: clock), retriers: [],
      clock: clock)
    let file = folder.appending("poster.bin")
    let download = Task { try await client.download(.get("poster"), to: file) }
    await source.held()
    // Every byte sent before the silence has arrived (each stamped with the clock's time then):
    // from here on the clock alone decides.
    let partial = PartialDownload(destination: file, progress: nil)
    while partial.offset < Int64(Self.length / 2) { await Task.yield() }
    clock.advance(by: .milliseconds(999))
    clock.advance(by: .milliseconds(1))
    let error = await apiError { try await download.value }
    guard case .timedOut = error else {
      Issue.record("expected a stall, got \(String(describing: error))")
      return
    }
    // What arrived stays for the next try to resume.
    #expect(PartialDownload(destination: file, progress: nil).offset > 0)
  }
}
