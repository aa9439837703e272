import Api
import BooksKit
import Composition
import Foundation
import Injection
import KernelTesting
import KernelTestingComposition
import Layers
import Testing

/// The books app's real composition, with parts swapped in a child container.
@Suite struct ContainerTests {
  static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// The app's own config file, as `books` reads it.
  static func config(_ profile: String) throws -> KernelConfig {
    try KernelApp.books.load(path: "Config/books.yaml", workingDirectory: package)
      .resolve(profile: profile)
  }

  /// A transport that records every request and answers each with `json`, in process.
  static func answering(_ json: String) -> RecordingTransport {
    RecordingTransport { _, _ in ApiResponse(status: 200, body: Data(json.utf8)) }
  }

  /// The `api` profile's book service over a transport answering `book` in the library's
  /// envelope, the transport, and the data dir to remove.
  static func api(answering book: String) throws -> (
    ServiceStack, RecordingTransport, TemporaryDirectory
  ) {
    let data = try TemporaryDirectory("books")
    let transport = Self.answering(#"{"data": \#(book)}"#)
    let container = try composedContainer(
      app: .books, config: try Self.config("api"), dataDirectory: data.url
    ) { try $0.register((any Transport).self) { _ in transport } }
    return (try container.stack("books"), transport, data)
  }

  @Test func aSwappedTransportSeesTheEnvironmentsKeyOnEveryRequest() async throws {
    let (books, transport, data) = try Self.api(
      answering:
        #"{"id": 7, "title": "Dune", "author": "Frank Herbert", "added_at": "2026-01-05T09:30:00.250Z"}"#
    )
    defer { data.remove() }
    let dune = try await books.answer(.book(id: 7)).value
    #expect(dune.title == "Dune" && dune.author == "Frank Herbert")
    #expect(dune.addedAt == Date(timeIntervalSince1970: 1_767_605_400.25))
    let sent = try #require(transport.requests.all.first)
    #expect(sent.targetURL?.absoluteString == "http://127.0.0.1:8080/api/books/7")
    #expect(sent.value(of: "X-Library-Card") == "k-local")
  }

  @Test func aNewBookIsPostedAsJSONInTheLibrarysSpelling() async throws {
    let (books, transport, data) = try Self.api(
      answering:
        #"{"id": 4, "title": "Middlemarch", "author": "George Eliot", "added_at": "2026-11-25T19:00:00.123Z"}"#
    )
    defer { data.remove() }
    let added = try await books.answer(.add(title: "Middlemarch", author: "George Eliot")).value
    #expect(added.id == 4)
    let sent = try #require(transport.requests.all.first)
    #expect(sent.method == .post && sent.value(of: "Content-Type") == "application/json")
    let body = try #require(transport.bodies.all.first ?? nil)
    #expect(
      String(decoding: body, as: UTF8.self) == #"{"author":"George Eliot","title":"Middlemarch"}"#)
  }

  @Test func theOfflineStackAnswersFromTheStoreTheLayeredOneFilled() async throws {
    let data = try TemporaryDirectory("books")
    defer { data.remove() }
    let store = InMemoryStore()
    let transport = Self.answering(
      #"{"data": [{"id": 2, "title": "Emma", "author": "Jane Austen", "added_at": "2026-02-11T17:04:12.007Z"}], "meta": {"next_page": null}}"#
    )
    let layered = try composedContainer(
      app: .books, config: try Self.config("layered"), dataDirectory: data.url
    ) { child in
      try child.register((any Transport).self) { _ in transport }
      try child.register((any CacheStore).self) { _ in store }
    }
    let shelf = try await layered.stack("books").answer(.shelf)
    #expect(shelf.value.map(\.title) == ["Emma"] && shelf.origin == .network)

    let offline = try composedContainer(
      app: .books, config: try Self.config("offline"), dataDirectory: data.url
    ) { child in
      try child.register((any CacheStore).self) { _ in store }
    }
    let stored = try await offline.stack("books").answer(.shelf)
    #expect(stored.value == shelf.value && stored.origin == .cache)
    // The cache alone: no api client was registered, and nothing more was sent.
    #expect(throws: (any Error).self) { try offline.resolve(ApiClient.self) }
    #expect(transport.requests.all.count == 1)
    // Book 2 was on the shelf: stored once, it answers its own call; a book never seen does not.
    #expect(try await offline.stack("books").answer(.book(id: 2)).value.title == "Emma")
    await #expect(throws: LayerError.miss(what: "book 9")) {
      try await offline.stack("books").answer(.book(id: 9))
    }
  }
}
