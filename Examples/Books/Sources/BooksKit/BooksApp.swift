import Composition

extension KernelApp {
  /// The books app (`BOOKS_*` variables, `Config/books.yaml` or BooksConfig) and what its config
  /// names: the `books` service (its stack per profile, `books: [api]`), the `perPage` setting.
  public static var books: KernelApp {
    var app = KernelApp(name: "books", builtInConfig: (BooksConfig.name, BooksConfig.yaml))
    app.catalog.feed(.books, of: "books")
    app.catalog.setting(
      AppSetting("perPage", .integer, default: "20", range: 1...1000, doc: "Books shelf prints."))
    return app
  }
}
