import Api
import BooksKit
import Composition
import Foundation
import KernelTesting
import KernelTestingComposition
import Testing

/// A library that signs every request with a card number and a day's stamp: an authenticator
/// of the app's own, registered through the catalog as Kernel registers its built-ins, and
/// named by the config's `environments.<name>.auth`.
// snippet: own-authenticator
struct LibraryCardAuthenticator: Authenticator {
  struct Card: AuthenticationCredential {
    let number: String
  }

  let header: String

  var kind: String { "library card" }
  var secretHeaders: Set<String> { [header.lowercased()] }

  func standingCredential(for environment: ApiEnvironment) -> Card? {
    environment.values["card"].map { Card(number: $0) }
  }

  func apply(_ credential: Card, to request: inout HTTPRequest) {
    request.set(header, "card \(credential.number)")
  }

  func refresh(_ current: Card?, in context: AuthenticationContext) async throws -> Card {
    try configuredCredential(replacing: current, in: context, setting: "card")
  }
}
// end snippet

@Suite struct OwnAuthenticatorTests {
  /// The books app with its own authenticator and the setting it reads.
  static var app: KernelApp {
    var app = KernelApp.books
    // snippet: own-authenticator
    app.catalog.authenticator(
      "libraryCard", usage: "libraryCard(header: <name>)",
      parameters: { try $0.string("header", at: 0, default: "X-Card") },
      build: { header, _, _ in LibraryCardAuthenticator(header: header) })
    app.catalog.setting(
      AppSetting("card", .secret, scope: .environment, doc: "The library card's number."))
    // end snippet
    return app
  }

  static func config(auth: String, in folder: TemporaryDirectory) throws -> KernelConfig {
    let file = folder.url.appendingPathComponent("books.yaml")
    try """
    environment: local
    context: memory
    environments:
      local: {baseURL: "http://127.0.0.1:8080/api/", card: "4711", auth: "\(auth)"}
    books: [api]
    profiles: {api: {}}
    """.write(to: file, atomically: true, encoding: .utf8)
    return try app.load(path: file.path, workingDirectory: folder.url).resolve(profile: "api")
  }

  @Test func theConfigNamesTheAppsAuthenticatorAndItsCredentialGoesOnEveryRequest()
    async throws
  {
    let folder = try TemporaryDirectory("books")
    defer { folder.remove() }
    let transport = RecordingTransport { _, _ in
      ApiResponse(
        status: 200,
        body: Data(
          #"{"data": {"id": 1, "title": "Emma", "author": "Austen", "added_at": "2026-02-11T17:04:12Z"}}"#
            .utf8))
    }
    let container = try composedContainer(
      app: Self.app, config: try Self.config(auth: "libraryCard(header: X-Library)", in: folder),
      dataDirectory: folder.url
    ) { try $0.register((any Transport).self) { _ in transport } }
    _ = try await container.stack("books").answer(.book(id: 1))
    #expect(transport.requests.all.first?.value(of: "X-Library") == "card 4711")
    #expect(try container.resolve(ApiClient.self).secretHeaders.contains("x-library"))
  }

  @Test func aMisspelledLabelOfTheAppsAuthenticatorIsRefusedNamingTheClosest() throws {
    let folder = try TemporaryDirectory("books")
    defer { folder.remove() }
    let config = try Self.config(auth: "libraryCard(heder: X-Library)", in: folder)
    #expect {
      _ = try composedContainer(app: Self.app, config: config, dataDirectory: folder.url)
    } throws: { error in
      "\(KernelApp.rootCause(of: error))".contains(
        "environments.local.auth libraryCard(heder: X-Library) has no label heder; did you mean header?"
      )
    }
  }
}
