import Api
import Composition
import Domain
import Foundation
import Layers

// snippet: books-service
/// A book, as the api sends it and the app shows it.
public struct Book: Codable, Sendable, Equatable, Identifiable, CustomStringConvertible {
  public let id: Int
  public let title, author: String
  public let addedAt: Date
  /// `1  Middlemarch, George Eliot (added 2024-01-02)`: a book as the commands print it.
  public var description: String {
    "\(id)  \(title), \(author) (added \(addedAt.formatted(.iso8601.year().month().day())))"
  }
}

/// A book to add: what the app posts.
public struct NewBook: Codable, Sendable {
  public let title, author: String
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

/// Every profile's service: its layers over the api's client, or the cache alone (`store`).
struct LayeredBookService: BookService, LayeredService {
  let base: Source<ApiClient>?
  var layers: LayerStack

  func book(id: Int) async throws -> Book {
    try await answer(.item(Book.self, id: id)) {
      try await $0.response(.init(.get("books/\(id)"), mapping: library))
    }
  }

  func shelf() async throws -> [Book] {
    let call = ServiceCall<[Book]>(
      name: "shelf", key: "books", summary: "the shelf", entities: .list(Book.self))
    return try await answer(call) { client in
      let books: [Book] = try await client.all(
        .init(.get("books"), mapping: library), paging: .field("meta.next_page", query: "page"))
      return WithoutValidators(books)
    }
  }

  func add(_ book: NewBook) async throws -> Book {
    try await answer(.init(name: "add", key: "books/new", summary: "a new book", codec: nil)) {
      try await $0.response(
        .init(.post("books", body: .json(book, encoder: library.encoder())), mapping: library))
    }
  }
}
// end snippet

// snippet: books-assembly
/// Everything the books config may name, registered once.
public struct BooksAssembly: Assembly {
  public init() {}

  public func assemble(into catalog: inout Catalog) {
    catalog.service("books", (any BookService).self, source: ApiClient.self) { books in
      books.api { $0 }
      books.layered { LayeredBookService(base: $0, layers: LayerStack($1)) }
    }
    catalog.setting(
      AppSetting("perPage", .integer, default: "20", range: 1...1000, doc: "Books shelf prints."))
  }
}

extension KernelApp {
  /// The books app: `BOOKS_*` variables, `Config/books.yaml` or the copy built in (BooksConfig).
  public static var books: KernelApp {
    var app = KernelApp(name: "books", builtInConfig: (BooksConfig.name, BooksConfig.yaml))
    app.add(BooksAssembly())
    return app
  }
}
// end snippet
