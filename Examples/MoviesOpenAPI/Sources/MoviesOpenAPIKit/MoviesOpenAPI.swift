import Composition
import Domain
import Foundation
import KernelOpenAPI
import OpenAPIRuntime

// snippet: openapi-app
extension KernelApp {
  /// The movies-openapi app: `MOVIES_OPENAPI_*` variables, `Config/movies-openapi.yaml`, data dir
  /// `movies-openapi`; its generated client's operations as services the config stacks.
  public static var moviesOpenAPI: KernelApp {
    var app = KernelApp(name: "movies-openapi")
    app.add(MoviesAPI.Operations())
    return app
  }
}

/// The generated client, each operation run as one of Kernel's calls on the stack the profile
/// names for it (`movieOperations` for the rest).
public enum MoviesAPI {
  /// The operations the config may stack on their own (a write with an outbox among its layers).
  public static let operations = ["getMovie", "getTopGrossing", "rateMovie"]

  /// `movieOperations` and each operation, a service of the config.
  struct Operations: Assembly {
    func assemble(into catalog: inout Catalog) {
      for key in ["movieOperations"] + operations { catalog.service(key) }
    }
  }

  public static func client(_ composed: Composed) throws -> Client {
    Client(
      serverURL: try Servers.Server1.url(), configuration: .kernel,
      transport: KernelTransport(
        try composed.stack("movieOperations"), operations: try composed.stacks(named: operations)))
  }
}
// end snippet

extension MoviesAPI {
  public typealias Movie = Components.Schemas.Movie

  /// `getMovie`, from where its answer came (`Kernel-Origin`, `Age`); a 404 is `MovieNotFound`,
  /// any other undocumented answer `UnexpectedAnswer`.
  public static func movie(_ id: Int, through composed: Composed) async throws -> Answer<Movie> {
    switch try await client(composed).getMovie(path: .init(id: id)) {
    case .ok(let ok):
      return Answer(try ok.body.json, origin: ok.headers.Kernel_hyphen_Origin, age: ok.headers.Age)
    case .notFound: throw MovieNotFound(id: id)
    case .undocumented(let status, _): throw UnexpectedAnswer(operation: "getMovie", status: status)
    }
  }

  /// `getTopGrossing`, from where its answer came.
  public static func topGrossing(_ year: Int, through composed: Composed) async throws
    -> Answer<[Movie]>
  {
    switch try await client(composed).getTopGrossing(path: .init(year: year)) {
    case .ok(let ok):
      return Answer(try ok.body.json, origin: ok.headers.Kernel_hyphen_Origin, age: ok.headers.Age)
    case .undocumented(let status, _):
      throw UnexpectedAnswer(operation: "getTopGrossing", status: status)
    }
  }
}

extension MoviesAPI {
  /// What rating a movie came to: the api's rating, or kept in the outbox to be sent later.
  public enum Rated: Sendable, Equatable {
    case rated(Components.Schemas.Rating)
    case queued
  }

  /// `rateMovie`, with an idempotency key made here, once: a kept rating is sent with it.
  public static func rate(_ id: Int, score: Int, through composed: Composed) async throws -> Rated {
    let output = try await client(composed).rateMovie(
      path: .init(id: id), headers: .init(Idempotency_hyphen_Key: UUID().uuidString),
      body: .json(.init(score: score)))
    switch output {
    case .created(let created): return .rated(try created.body.json)
    case .accepted: return .queued
    case .conflict: throw UnexpectedAnswer(operation: "rateMovie", status: 409)
    case .undocumented(let status, _):
      throw UnexpectedAnswer(operation: "rateMovie", status: status)
    }
  }
}

/// No movie has this id (the api answered 404): exit 66 in the command line.
public struct MovieNotFound: Error, CustomStringConvertible, ClassifiedError {
  public let id: Int
  public var failure: ServiceFailure { .notFound }
  public var description: String { "No movie has the id \(id) (getMovie answered 404)." }
}

/// An answer the document does not describe: the failure its status says (a 404 is exit 66).
public struct UnexpectedAnswer: Error, CustomStringConvertible, ClassifiedError {
  public let operation: String
  public let status: Int
  public var failure: ServiceFailure { ServiceFailure(status: status) }
  public var description: String {
    "\(operation) answered HTTP \(status), which openapi.yaml does not describe."
  }
}
