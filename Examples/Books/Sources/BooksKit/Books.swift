import Api
import Composition
import Domain
import Foundation
import Layers

// snippet: books-service
/// A book, as the api sends it and the app shows it.
public struct Book: Codable, Sendable, Equatable, Identifiable {
  public let id: Int
  public let title: String
  public let author: String
  public let addedAt: Date
}

/// A book to add: what the app posts.
public struct NewBook: Codable, Sendable {
  public let title: String
  public let author: String
  public init(title: String, author: String) { (self.title, self.author) = (title, author) }
}

/// What the app asks for; the profile's stack answers it.
public protocol BookService: Sendable {
  func book(id: Int) async throws -> Book
  func shelf() async throws -> [Book]
  func add(_ book: NewBook) async throws -> Book
}

/// The library's api: `{"data": …, "meta": {"next_page": 2}}`, snake_case, no decoding code.
let library = JSONMapping(keyPath: "data", keys: .snakeCase)

/// The `api` source: request values sent through Kernel's client (adapters, retriers, mapping…);
/// each answer a `Response`, whose validators the cache keeps and offers back.
struct ApiBookService {
  let client: ApiClient
  func book(id: Int) async throws -> Response<Book> {
    try await client.response(.init(.get("books/\(id)"), mapping: library))
  }
  func shelf() async throws -> WithoutValidators<[Book]> {
    WithoutValidators(
      try await client.all(
        .init(.get("books"), mapping: library), paging: .field("meta.next_page", query: "page")))
  }
  func add(_ book: NewBook) async throws -> Response<Book> {
    let body = try RequestBody.json(book, encoder: library.encoder())
    return try await client.response(.init(.post("books", body: body), mapping: library))
  }
}

/// The layered form: one call description per call. The layers a profile names wrap it; with
/// no base it is the `store` source, answered by the cache alone, with no api client at all.
struct LayeredBookService: BookService, LayeredService {
  let base: Source<ApiBookService>?
  var layers: LayerStack

  func book(id: Int) async throws -> Book {
    // The entity Book `id`: answered from its row, whichever answer (the shelf) stored it.
    let call = ServiceCall<Book>(
      name: "book", entity: .item(Book.self, id: id), summary: "book \(id)")
    return try await layers.answer(call, from: base) { try await $0.book(id: id) }
  }

  func shelf() async throws -> [Book] {
    let call = ServiceCall<[Book]>(
      name: "shelf", key: "books", summary: "the shelf", entities: .list(Book.self))
    return try await layers.answer(call, from: base) { try await $0.shelf() }
  }

  /// A write is never answered from the cache: no codec.
  func add(_ book: NewBook) async throws -> Book {
    let call = ServiceCall<Book>(name: "add", key: "books/new", summary: "a new book", codec: nil)
    return try await layers.answer(call, from: base) { try await $0.add(book) }
  }
}
// end snippet

// snippet: books-assembly
/// The environment's own key, in the header the config names; declared secret, so it is
/// redacted in traces and never follows a redirect to another origin.
struct ApiKeyAdapter: RequestAdapter {
  let header: String
  var secretHeaders: Set<String> { [header] }
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    adapted.set(header, attempt.context.environment.values["apiKey"])
    return adapted
  }
}

/// Everything the books config may name, registered once.
public struct BooksAssembly: Assembly {
  public init() {}

  public func assemble(into catalog: inout Catalog) {
    catalog.service("books", (any BookService).self, source: ApiBookService.self) { books in
      books.api { ApiBookService(client: $0) }
      books.layered { LayeredBookService(base: $0, layers: LayerStack($1)) }
    }
    catalog.adapter(
      "apiKey", parameters: { try $0.string("header", at: 0, default: "X-Api-Key") },
      build: { header, _ in ApiKeyAdapter(header: header) })
    catalog.setting(AppSetting("apiKey", .secret, scope: .environment, doc: "The library's key."))
    catalog.setting(
      AppSetting("perPage", .integer, default: "20", range: 1...1000, doc: "Books shelf prints."))
  }
}

extension KernelApp {
  /// The books app: `BOOKS_*` variables, `Config/books.yaml` when the working directory has
  /// one, else the copy built in (`scripts/embed-config Examples/Books/Config/books.yaml
  /// Examples/Books/Sources/BooksKit/BooksConfig.swift BooksConfig`), data dir `books`.
  public static var books: KernelApp {
    var app = KernelApp(name: "books", builtInConfig: (BooksConfig.name, BooksConfig.yaml))
    app.add(BooksAssembly())
    return app
  }
}
// end snippet
