import BooksKit
import KernelServe

/// `books`: its own commands beside every one of Kernel's (config, auth, cache, sync, serve…).
@main struct Books: CommandLineMain {
  static let commandLine = CommandLineApp(
    .books, abstract: "Books from the library's api, its SQLite cache, or both.",
    examples: "Examples:\n  books serve &\n  books get 1\n  books --profile offline shelf",
    commands: [Get.self, Shelf.self, Add.self]
  ).serving(fixtures: "Fixtures")
}

/// `books get ID`: one book, from whichever stack the profile names.
struct Get: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "A book by its id.")
  @OptionGroup var global: GlobalOptions
  @Argument(help: "The book's id, e.g. 1.") var id: Int

  func run() async throws {
    guard id > 0 else { throw ValidationError("A book's id is a positive number, not \(id).") }
    try await Invocation(global).show(.book(id: id), from: "books", as: "books", one: "book")
  }
}

struct Shelf: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Every book on the shelf.")
  @OptionGroup var global: GlobalOptions

  func run() async throws {
    let invocation = try Invocation(global)
    let perPage = invocation.config.integer("perPage") ?? .max  // --per-page 5, BOOKS_PER_PAGE
    let books = try await invocation.answer(.shelf, from: "books")
    try invocation.show(books.map { Array($0.prefix(perPage)) }, as: "books", one: "book")
  }
}

struct Add: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Add a book to the shelf.")
  @OptionGroup var global: GlobalOptions
  @Option(help: "Its title.") var title: String
  @Option(help: "Its author.") var author: String

  func run() async throws {
    try await Invocation(global).show(
      writing: try .add(title: title, author: author), to: "books", as: "books", one: "book")
  }
}
