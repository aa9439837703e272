import Api
import Composition
import Foundation
import Layers

// A second app on Kernel, not about movies, through public API only: everything between the
// snippet markers is the app's side (at most 60 lines, `appSideIsSmall` counts them).

// snippet: books-app
struct Book: Codable, Sendable, Equatable { let id: Int, title: String }
protocol BookService: Sendable {
  func book(id: Int) async throws -> Book
}
/// The api source: request values, sent through Kernel's client; each answer a `Response`.
struct ApiBookService {
  let client: ApiClient
  func book(id: Int) async throws -> Response<Book> {
    try await client.response(.init(.get("books/\(id)")))
  }
}

/// The layered form: one call description; every layer, and the `store` source, come with it.
struct LayeredBookService: BookService, LayeredService {
  let base: Source<ApiBookService>?
  var layers: LayerStack
  func book(id: Int) async throws -> Book {
    let call = ServiceCall<Book>(name: "book", key: "books/\(id)", summary: "book \(id)")
    return try await answer(call) { try await $0.book(id: id) }
  }
}

/// The environment's own key, in the header the config names; declared secret.
struct ApiKeyAdapter: RequestAdapter {
  let header: String
  var secretHeaders: Set<String> { [header] }
  func adapt(_ request: HTTPRequest, for attempt: Attempt) async throws -> HTTPRequest {
    var adapted = request
    adapted.set(header, attempt.context.environment.values["apiKey"])
    return adapted
  }
}

/// A 429 is sent again at once, at most `max` times (`rateLimit(max: 2)`).
struct RateLimitRetrier: RequestRetrier {
  let max: Int, name = "rateLimit"
  func retry(_ request: HTTPRequest, for attempt: Attempt, after outcome: AttemptOutcome) async
    -> RetryDecision
  { outcome.status == 429 && attempt.retriesBy[name, default: 0] < max ? .retry : .doNotRetry }
}

/// What the books config may name.
struct BooksAssembly: Assembly {
  func assemble(into catalog: inout Catalog) {
    catalog.service("books", (any BookService).self, source: ApiBookService.self) { books in
      books.api { ApiBookService(client: $0) }
      books.layered { LayeredBookService(base: $0, layers: LayerStack($1)) }
    }
    catalog.adapter(
      "apiKey", parameters: { try $0.string("header", at: 0, default: "X-Api-Key") },
      build: { header, _ in ApiKeyAdapter(header: header) })
    catalog.retrier(
      "rateLimit", parameters: { try $0.positiveInt("max", at: 0, default: 1) },
      build: { max, _ in RateLimitRetrier(max: max) })
    catalog.setting(AppSetting("apiKey", .secret, scope: .environment, doc: "The app's key."))
    catalog.setting(AppSetting("shelf", .string, default: "to-read", doc: "The first shelf."))
  }
}
// end snippet
