import Api
import Foundation
import KernelTesting
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
