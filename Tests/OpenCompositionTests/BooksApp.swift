import Api
import Composition
import Foundation
import Layers

// A second app on Kernel, not about movies, through public API only: everything between the
// snippet markers is the app's side (at most 60 lines, `appSideIsSmall` counts them).

// snippet: books-app
struct Book: Codable, Sendable, Equatable { let id: Int, title: String }
/// The one call, declared once: its request, its key (`books/7`, from the route) and how it is
/// kept (whole, as JSON); every layer, and the `store` source, come with it.
extension ServiceCall where Value == Book {
  static func book(id: Int) -> Self {
    ServiceCall(.init(.get("books/\(id)")), summary: "book \(id)")
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
    catalog.service("books")
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
