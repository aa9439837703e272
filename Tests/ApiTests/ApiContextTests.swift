import Api
import Domain
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import SampleApi
import Testing

@Suite(.timeLimit(.minutes(1))) struct ApiContextTests {
  @Test func switchingTheEnvironmentRedirectsAnAlreadyMadeService() async throws {
    let first = try await FixtureServer.start(routes: .sampleMovies())
    let second = try await FixtureServer.start(routes: .sampleMovies())
    let context = InMemoryApiContext(
      environment: try ApiEnvironment(name: "one", baseURL: first.baseURL))
    let movies = ApiClient(
      context: context, transport: PlatformTransport(configuration: .loopbackTests))

    _ = try await movies.response(ApiRequest<Movie>(.movie(id: 1)))
    context.use(try ApiEnvironment(name: "two", baseURL: second.baseURL))
    _ = try await movies.response(ApiRequest<Movie>(.movie(id: 2)))
    await first.stop()
    await second.stop()

    #expect(first.responder.requests(to: "movies/1") == 1)
    #expect(first.responder.requests(to: "movies/2") == 0)
    #expect(second.responder.requests(to: "movies/2") == 1)
  }

  @Test func aTokenBelongsToItsEnvironment() throws {
    let context = InMemoryApiContext(environment: .sample, token: AuthToken("abc"))
    context.use(try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:1/"))
    #expect(context.token == nil)
    context.use(.sample)
    #expect(context.token == AuthToken("abc"))
  }

  private func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory
      .appendingPathComponent("kernel-context-\(UUID().uuidString)", isDirectory: true)
      .appendingPathComponent("context.json")
  }

  private func open(_ file: URL, warnings: Recorder<String> = Recorder()) throws
    -> PersistentApiContext
  {
    let local = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:8080/api/")
    return try PersistentApiContext(
      file: file, defaultEnvironment: .sample, environments: [.sample, local],
      warn: { warnings.append($0) })
  }

  @Test func thePersistedContextSurvivesARestartAndIsPrivate() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let context = try open(file)
    try context.use(try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:8080/api/"))
    try context.store(token: AuthToken("tok-1"))

    let reopened = try open(file)
    #expect(reopened.environment.name == "local")
    #expect(reopened.token == AuthToken("tok-1"))
    let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    let folder = try FileManager.default.attributesOfItem(
      atPath: file.deletingLastPathComponent().path)
    #expect((folder[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    let leftovers = try FileManager.default.contentsOfDirectory(
      atPath: file.deletingLastPathComponent().path)
    #expect(leftovers == ["context.json"])
  }

  @Test func anOverrideLastsOneProcessAndKeepsTheSavedChoice() throws {
    let file = temporaryFile()
    let local = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:1/")
    let context = try open(file)
    try context.use(local)
    context.override(with: .sample)
    try context.store(token: AuthToken("for-sample"))  // saving while overridden
    #expect(context.environment.name == "sample")

    let reopened = try open(file)
    #expect(reopened.environment.name == "local")
    reopened.override(with: .sample)
    #expect(reopened.token == AuthToken("for-sample"))
  }

  @Test func aCorruptContextIsReplacedWithAWarning() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try writePrivate("{ this is not json", to: file)
    let warnings = Recorder<String>()

    let context = try open(file, warnings: warnings)
    #expect(context.environment == .sample)
    #expect(context.token == nil)
    #expect(warnings.all.count == 1)
    #expect(warnings.all.first?.contains("could not be read") == true)
    let files = try FileManager.default.contentsOfDirectory(
      atPath: file.deletingLastPathComponent().path)
    #expect(files.contains { $0.hasPrefix("context.json.corrupt-") })
    // Opening writes nothing; the first change writes a good file, which opens without a word.
    #expect(!files.contains("context.json"))
    try context.store(token: AuthToken("t"))
    _ = try open(file, warnings: warnings)
    #expect(warnings.all.count == 1)
  }

  @Test func aSavedEnvironmentTheConfigNoLongerHasFallsBackWithAWarning() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try writePrivate(#"{"environment": "staging", "tokens": {}}"#, to: file)
    let warnings = Recorder<String>()
    let context = try open(file, warnings: warnings)
    #expect(context.environment == .sample)
    #expect(warnings.all.first?.contains("\"staging\"") == true)
  }

  @Test func aContextFileReadableByOthersIsTightenedWhenRead() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(#"{"environment": "sample", "tokens": {}}"#.utf8).write(to: file)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
    let warnings = Recorder<String>()
    _ = try open(file, warnings: warnings)
    let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o600)
    #expect(
      warnings.all == [
        "The api context file \(file.path) was readable by others (644); it is now 0600."
      ])
  }

  /// A link in the context file's place is another's: read through it is nothing, its target's
  /// mode is not changed, and a save is refused rather than written through it or over it.
  @Test func aLinkInTheContextFilesPlaceIsNeitherReadNorWrittenThrough() throws {
    let file = temporaryFile()
    let folder = file.deletingLastPathComponent()
    defer { try? FileManager.default.removeItem(at: folder) }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let other = folder.appendingPathComponent("someone-elses.json")
    let theirs = Data(#"{"environment": "local", "tokens": {}}"#.utf8)
    try theirs.write(to: other)
    try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: other.path)
    try FileManager.default.createSymbolicLink(at: file, withDestinationURL: other)
    let warnings = Recorder<String>()
    let context = try open(file, warnings: warnings)
    #expect(context.environment == .sample)
    #expect(warnings.all.count == 1)
    #expect(warnings.all.first?.contains("is a symbolic link (to \(other.path))") == true)
    #expect(throws: ApiError.self) { try context.store(token: AuthToken("secret")) }
    #expect(try Data(contentsOf: other) == theirs)
    let mode = try FileManager.default.attributesOfItem(atPath: other.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o644)
    let kind = try FileManager.default.attributesOfItem(atPath: file.path)[.type]
    #expect(kind as? FileAttributeType == .typeSymbolicLink)
  }

  @Test func aTokenBelongsToItsOriginNotToTheEnvironmentsName() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let a = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:8080/api/")
    let b = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:9090/api/")
    let context = try open(file)
    context.override(with: a)
    try context.store(token: AuthToken("issued-by-a"))
    // The same name pointed at another origin (--base-url) has no token.
    context.override(with: b)
    #expect(context.token == nil)
    let reopened = try open(file)
    reopened.override(with: b)
    #expect(reopened.token == nil)
    reopened.override(with: a)
    #expect(reopened.token == AuthToken("issued-by-a"))
    // A token saved by name, before tokens were kept by origin, is dropped.
    try writePrivate(#"{"environment": "local", "tokens": {"local": {"secret": "old"}}}"#, to: file)
    let old = try open(file)
    old.override(with: a)
    #expect(old.token == nil)
  }

  /// Writes `text` as a file only its owner can read, as Kernel writes it.
  private func writePrivate(_ text: String, to file: URL) throws {
    try FileManager.default.createDirectory(
      at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
    try? FileManager.default.removeItem(at: file)
    guard
      FileManager.default.createFile(
        atPath: file.path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600])
    else { throw CocoaError(.fileWriteUnknown) }
  }

  @Test func anUnwritableFolderIsAClearErrorAtTheFirstChange() throws {
    // Opening reads only, so it works; saving the first token cannot.
    let context = try PersistentApiContext(
      file: URL(fileURLWithPath: "/proc/kernel-cannot-write/context.json"),
      defaultEnvironment: .sample, environments: [], warn: { _ in })
    let error = #expect(throws: ApiError.self) { try context.store(token: AuthToken("t")) }
    guard case .contextStorage(let file, _) = error else {
      Issue.record("expected contextStorage, got \(String(describing: error))")
      return
    }
    #expect(file == "/proc/kernel-cannot-write/context.json")
  }

  /// Two processes' views of one file, each opened while a token was saved: one logs out, then
  /// the other switches the environment. The switch rewrote the token it still held in memory,
  /// so the logout was undone; now every change re-reads the file under the lock.
  @Test func aChangeNeverPutsBackWhatAnotherProcessRemoved() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    let local = try ApiEnvironment(name: "local", baseURL: "http://127.0.0.1:8080/api/")
    try open(file).store(token: AuthToken("tok-1"))
    let loggingOut = try open(file)
    let switching = try open(file)
    try loggingOut.store(token: nil)
    try switching.use(local)
    try switching.use(.sample)
    let reopened = try open(file)
    #expect(reopened.token == nil)
    #expect(reopened.environment.name == "sample")
    #expect(switching.token == nil)
  }

  /// Many changes from two contexts on two threads at once: none is lost.
  @Test func concurrentChangesFromTwoContextsAreAllKept() throws {
    let file = temporaryFile()
    defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
    try open(file).use(.sample)
    let contexts = [try open(file), try open(file)]
    let failures = Recorder<String>()
    DispatchQueue.concurrentPerform(iterations: 2) { side in
      for round in 0..<25 {
        do {
          let environment = try ApiEnvironment(
            name: "local", baseURL: "http://127.0.0.1:\(9000 + side * 100 + round)/api/")
          contexts[side].override(with: environment)
          try contexts[side].store(token: AuthToken("t\(side)-\(round)"))
        } catch {
          failures.append("\(error)")
        }
      }
    }
    #expect(failures.all.isEmpty)
    let saved = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
    #expect((saved?["credentials"] as? [String: Any])?.count == 50, "\(String(describing: saved))")
  }
}
