import Api
import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

@Suite(.timeLimit(.minutes(1))) struct ApiEnvironmentTests {
  @Test(arguments: ["http://api.example.com/", "http://10.0.0.2/api/", "http://192.168.1.1/"])
  func plainHttpToAnotherHostIsRefused(url: String) throws {
    let error = #expect(throws: ApiError.self) { try ApiEnvironment(name: "staging", baseURL: url) }
    guard case .insecureEnvironment(let name, let refused) = error else {
      Issue.record("expected insecureEnvironment, got \(String(describing: error))")
      return
    }
    #expect(name == "staging")
    #expect(refused == url)
    #expect(error?.failure == .configuration)
  }

  @Test func plainHttpIsAllowedWhenMarkedInsecure() throws {
    let environment = try ApiEnvironment(
      name: "lan", baseURL: "http://10.0.0.2/api", allowsInsecureHTTP: true)
    #expect(environment.baseURL.absoluteString == "http://10.0.0.2/api/")
  }

  @Test(arguments: [
    "http://127.0.0.1:8080/api/", "http://localhost/api/", "http://[::1]:9/",
    "https://example.com/api/",
  ])
  func loopbackAndHttpsAreAllowed(url: String) throws {
    #expect(throws: Never.self) { try ApiEnvironment(name: "ok", baseURL: url) }
  }

  @Test(arguments: ["ftp://example.com/", "not a url", "https:///nohost"])
  func aBaseURLThatIsNotHttpIsInvalid(url: String) {
    #expect(throws: ApiError.self) { try ApiEnvironment(name: "bad", baseURL: url) }
  }

  @Test func routesResolveBelowTheBaseURL() throws {
    let environment = try ApiEnvironment(
      name: "production",
      baseURL: "https://danielsaidi.com/demo_Alamofire_AlamofireObjectMapper_Realm/api")
    #expect(
      Route.topGrossingMovies(year: 2016).url(in: environment).absoluteString
        == "https://danielsaidi.com/demo_Alamofire_AlamofireObjectMapper_Realm/api/movies/topGrossing/2016"
    )
    #expect(Route.auth.url(in: environment).path.hasSuffix("/api/auth"))
    #expect(Route.movie(id: 3).description == "GET movies/3")
  }

  @Test(arguments: [
    "movies/topGrossing/2016", "auth", "a/b.c/~d_e-f", "", "x/", "a//b", "./x", "a/../b", "..",
    ".hidden/x", "a b", "caf\u{e9}", "x?y=1", "x#frag", "100%", "//other.host/x",
    "https://other.host/", "a:b",
  ])
  func requestsAreTheRouteURLsTakenApart(path: String) throws {
    for base in [
      "https://example.com/api/", "http://127.0.0.1:8080/a/b/", "https://user:pw@example.com",
      "http://[::1]:9000/api",
    ] {
      let environment = try ApiEnvironment(name: "x", baseURL: base)
      for route in [
        Route.get(path), Route.get(path, query: [URLQueryItem(name: "q", value: "a b")]),
        Route.post(path, body: .bytes(Data("{}".utf8), contentType: "application/json")),
      ] {
        let request = route.request(in: environment)
        let expected = HTTPRequest(route.method, route.url(in: environment))
        #expect(request.scheme == expected.scheme, "\(base) \(path)")
        #expect(request.authority == expected.authority, "\(base) \(path)")
        #expect(request.path == expected.path, "\(base) \(path)")
        #expect(request.method == route.method)
        // The body's content type, sent as the route's header fields did not name one.
        var fields = route.headerFields
        fields[.contentType] = route.body?.contentType
        #expect(request.headerFields == fields)
      }
    }
  }

  @Test func anEnvironmentKnowsItsOwnRequestsAndItsOrigin() throws {
    let environment = try ApiEnvironment(name: "x", baseURL: "http://LOCALHOST:80/api/")
    #expect(environment.isOrigin(of: Route.auth.request(in: environment)))
    #expect(
      environment.isOrigin(of: HTTPRequest(.get, try #require(URL(string: "http://localhost/x")))))
    #expect(
      !environment.isOrigin(
        of: HTTPRequest(.get, try #require(URL(string: "http://localhost:81/x")))))
    #expect(
      !environment.isOrigin(of: HTTPRequest(.get, try #require(URL(string: "https://localhost/x"))))
    )
    let decoded = try JSONDecoder().decode(
      ApiEnvironment.self, from: try JSONEncoder().encode(environment))
    #expect(decoded == environment)
    #expect(decoded.origin == Origin(try #require(URL(string: "http://localhost/"))))
  }

  @Test func aSavedEnvironmentIsValidatedWhenDecoded() throws {
    let json = Data(#"{"name": "evil", "baseURL": "http://attacker.example/"}"#.utf8)
    #expect(throws: ApiError.self) { try JSONDecoder().decode(ApiEnvironment.self, from: json) }
  }

  @Test func aHeaderNameMustBeAToken() {
    #expect(throws: ApiError.self) {
      try ApiEnvironment(name: "x", baseURL: "https://example.com/", tokenHeader: "Bad Header")
    }
  }
}
