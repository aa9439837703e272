import Foundation
import KernelTesting
import SampleApi
import Testing

/// Any app's API from closures or a folder of JSON files, with the faults of the movie API.
@Suite struct FixtureRoutesTests {
  private func text(_ response: SampleResponse) -> String {
    String(decoding: response.body, as: UTF8.self)
  }

  private func get(_ responder: SampleApiResponder, _ path: String, token: String? = nil) async
    -> SampleResponse
  {
    let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
    return await responder.respond(to: SampleRequest(path: path, headers: headers))
  }

  @Test func aPatternBindsItsSegmentsAndTheMostLiteralRouteWins() async {
    var routes = FixtureRoutes()
    routes.add("GET", "/api/books/{id}") { request in
      .json(["book": request.parameters["id"] ?? "?"])
    }
    routes.add("GET", "/api/books/7") { _ in .json(["book": "seven"]) }
    routes.add("GET", "/api/shelves/{shelf}/books/{id}") { request in
      .json([request.parameters["shelf"] ?? "?", request.parameters["id"] ?? "?"])
    }
    let responder = SampleApiResponder(routes: routes)
    #expect(text(await get(responder, "/api/books/42")) == #"{"book":"42"}"#)
    #expect(text(await get(responder, "/api/books/7")) == #"{"book":"seven"}"#)
    #expect(text(await get(responder, "/api/shelves/to-read/books/3")) == #"["to-read","3"]"#)
    // Added later, an equal pattern replaces the earlier one.
    responder.handle("GET", "/api/books/{id}") { _ in .json(["book": "replaced"]) }
    #expect(text(await get(responder, "/api/books/42")) == #"{"book":"replaced"}"#)
    #expect(text(await get(responder, "/api/books/7")) == #"{"book":"seven"}"#)
  }

  @Test func anUnknownPathIsA404NamingItAndAnotherMethodA405() async throws {
    var routes = FixtureRoutes()
    routes.add("GET", "/api/books/{id}") { _ in .json([1]) }
    let responder = SampleApiResponder(routes: routes)
    let missing = await get(responder, "/api/authors/1")
    #expect(missing.status == 404)
    #expect(text(missing) == #"{"error":"no route answers GET /api/authors/1"}"#)
    let post = await responder.respond(to: SampleRequest(method: "POST", path: "/api/books/1"))
    #expect(post.status == 405)
    #expect(text(post).contains("POST is not allowed on"))
    // The movie API is not behind an app's routes.
    #expect(await get(responder, "/api/movies/1").status == 404)
  }

  @Test func latencyFaultsAndAuthApplyToEveryRoute() async throws {
    var routes = FixtureRoutes()
    routes.add("GET", "/api/books/{id}") { _ in .json(["title": "Dune"]) }
    var options = SampleApiResponder.Options()
    options.failFirst = 1
    options.requireAuth = true
    let clock = TestClock()
    options.clock = clock
    options.latency = .milliseconds(30)
    let responder = SampleApiResponder(options: options, routes: routes)
    let first = Task { await get(responder, "/api/books/1") }
    await clock.waitForSleepers()
    clock.advance(by: .milliseconds(30))
    #expect(await first.value.status == 503)
    let unauthorized = Task { await get(responder, "/api/books/1") }
    await clock.waitForSleepers()
    clock.advance(by: .milliseconds(30))
    #expect(await unauthorized.value.status == 401)
    // The token route is the base path's auth, as for the movie API; its first try fails too.
    for _ in 0..<2 {
      let auth = Task { await get(responder, "/api/auth") }
      await clock.waitForSleepers()
      clock.advance(by: .milliseconds(30))
      let response = await auth.value
      guard response.status == 200 else { continue }
      let book = Task { await get(responder, "/api/books/1", token: text(response)) }
      await clock.waitForSleepers()
      clock.advance(by: .milliseconds(30))
      #expect(text(await book.value) == #"{"title":"Dune"}"#)
    }
    #expect(responder.requests(to: "books/1") == 3)
    #expect(responder.requests(to: "auth") == 2)
  }

  @Test func aFolderServesItsFilesByPathWithCatchAllSegments() async throws {
    let folder = try TemporaryDirectory("fixtures")
    defer { folder.remove() }
    try write(#"{"id": 7, "title": "Dune"}"#, to: folder, "api/books/7.json")
    try write(#"{"id": 0, "title": "Any book"}"#, to: folder, "api/books/{id}.json")
    try write(#"[{"id": 7}]"#, to: folder, "api/books.json")
    try write("not served", to: folder, "api/notes.txt")
    try write("{}", to: folder, ".hidden/secret.json")
    let routes = try FixtureRoutes.folder(folder.url)
    #expect(routes.patterns == ["GET /api/books", "GET /api/books/7", "GET /api/books/{id}"])
    let responder = SampleApiResponder(routes: routes)
    let dune = await get(responder, "/api/books/7")
    #expect(dune.status == 200 && dune.headers["Content-Type"] == "application/json")
    #expect(text(dune) == #"{"id": 7, "title": "Dune"}"#)
    #expect(text(await get(responder, "/api/books/8")) == #"{"id": 0, "title": "Any book"}"#)
    #expect(text(await get(responder, "/api/books")) == #"[{"id": 7}]"#)
    #expect(await get(responder, "/api/notes").status == 404)
    #expect(await get(responder, "/.hidden/secret").status == 404)
  }

  @Test func aFolderServesOneFilePerPageAndCannedAnswersToWrites() async throws {
    let folder = try TemporaryDirectory("fixtures")
    defer { folder.remove() }
    try write(#"{"page": 1}"#, to: folder, "api/books.json")
    try write(#"{"page": 2}"#, to: folder, "api/books?page=2.json")
    try write(#"{"page": "2, by title"}"#, to: folder, "api/books?page=2&sort=title.json")
    try write(#"{"data": {"id": 4}}"#, to: folder, "api/books.post.json")
    let routes = try FixtureRoutes.folder(folder.url)
    #expect(
      routes.patterns == [
        "GET /api/books", "GET /api/books?page=2", "GET /api/books?page=2&sort=title",
        "POST /api/books",
      ])
    let responder = SampleApiResponder(routes: routes)
    #expect(text(await get(responder, "/api/books")) == #"{"page": 1}"#)
    #expect(text(await get(responder, "/api/books?page=3")) == #"{"page": 1}"#)
    #expect(text(await get(responder, "/api/books?page=2")) == #"{"page": 2}"#)
    // The pattern with more query values wins; other parameters may come along.
    #expect(
      text(await get(responder, "/api/books?sort=title&page=2&q=x"))
        == #"{"page": "2, by title"}"#)
    #expect(text(await get(responder, "/api/books?page=%32")) == #"{"page": 2}"#)
    let created = await responder.respond(
      to: SampleRequest(method: "POST", path: "/api/books", body: Data(#"{"title": "Emma"}"#.utf8)))
    #expect(created.status == 201 && text(created) == #"{"data": {"id": 4}}"#)
  }

  @Test func aFolderThatCannotBeServedIsRefusedNamingTheFile() throws {
    let folder = try TemporaryDirectory("fixtures")
    defer { folder.remove() }
    let empty = #expect(throws: FixtureServerError.self) { try FixtureRoutes.folder(folder.url) }
    #expect(empty?.description.hasSuffix("cannot be served: it holds no .json file.") == true)
    try write(#"{"id": 7,"#, to: folder, "api/books/7.json")
    let broken = #expect(throws: FixtureServerError.self) { try FixtureRoutes.folder(folder.url) }
    #expect(
      broken?.description
        == "The fixture \(folder.url.path)/api/books/7.json cannot be served: it does not hold JSON."
    )
    let file = folder.appending("api/books/7.json")
    let notAFolder = #expect(throws: FixtureServerError.self) { try FixtureRoutes.folder(file) }
    #expect(notAFolder?.description.hasSuffix("cannot be served: it is not a folder.") == true)
    let missing = #expect(throws: FixtureServerError.self) {
      try FixtureRoutes.folder(folder.appending("nowhere"))
    }
    #expect(missing?.description.contains("no such file or directory") == true)
  }

  /// A link in the folder to a file elsewhere is refused, naming where it leads: the folder
  /// serves what it holds; a link to a file in the folder is served as that file.
  @Test func aLinkOutOfTheFolderIsRefused() throws {
    let folder = try TemporaryDirectory("fixtures")
    defer { folder.remove() }
    let elsewhere = try TemporaryDirectory("elsewhere")
    defer { elsewhere.remove() }
    try write(#"{"id": 1}"#, to: folder, "api/books/1.json")
    try FileManager.default.createSymbolicLink(
      at: folder.appending("api/books/2.json"),
      withDestinationURL: folder.appending("api/books/1.json"))
    #expect(try FixtureRoutes.folder(folder.url).patterns.count == 2)
    try write(#"{"secret": true}"#, to: elsewhere, "theirs.json")
    try FileManager.default.createSymbolicLink(
      at: folder.appending("api/books/3.json"),
      withDestinationURL: elsewhere.appending("theirs.json"))
    let refused = #expect(throws: FixtureServerError.self) { try FixtureRoutes.folder(folder.url) }
    #expect(
      refused?.description
        == "The fixture \(folder.url.path)/api/books/3.json cannot be served: it is a link to"
        + " \(elsewhere.url.resolvingSymlinksInPath().path)/theirs.json, outside the fixture folder;"
        + " copy the file in instead.")
  }

  private func write(_ text: String, to folder: TemporaryDirectory, _ path: String) throws {
    let url = folder.appending(path)
    try FileManager.default.createDirectory(
      at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
    try Data(text.utf8).write(to: url)
  }
}
