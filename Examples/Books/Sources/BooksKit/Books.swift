import Api
import Foundation
import Layers

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

/// Where the library's answers keep their data (`{"data": …}`), in its spelling (`added_at`).
let library = JSONMapping(keyPath: "data", keys: .snakeCase)

/// Each call, declared once: its request and how its answer is kept (`composed.stack("books")`).
extension ServiceCall where Value == Book {
  /// `GET books/{id}`, kept as the entity `Book/{id}` whichever answer stored it.
  public static func book(id: Int) -> Self {
    ServiceCall(.init(.get("books/\(id)"), mapping: library), entities: .item(Book.self, id: id))
  }

  /// `POST books` with `{"title", "author"}`, a write: the book the library made of them.
  public static func add(title: String, author: String) throws -> Self {
    let body = try RequestBody.json(["title": title, "author": author])
    return ServiceCall(.init(.post("books", body: body), mapping: library), summary: "a new book")
  }
}

extension ServiceCall where Value == [Book] {
  /// `GET books`, every page, kept as the ids of its books; when it never was (`books sync`
  /// alone stored books), the stored books by id.
  public static let shelf = ServiceCall(
    .init(.get("books"), mapping: library), paging: .field("meta.next_page", query: "page"),
    summary: "the shelf", entities: .list(Book.self),
    local: LocalQuery(order: [.init(\Book.id)], summary: "the stored books"))
}

extension ChangesFeed {
  /// `GET books/changes?cursor=C`: the books added or changed and the ids deleted since `C`
  /// (`{"data": {"items", "deleted", "next_cursor"}}`), for `books sync`.
  public static let books = ChangesFeed(
    Book.self, name: "books", path: "books/changes", since: "cursor", mapping: library,
    changed: "items", deleted: "deleted", token: "next_cursor")
}
