import Testing

@testable import Injection

@Suite struct ArgumentTests {
  struct Loader: Sendable, Equatable {
    let id: Int
    let name: String
    let ratio: Double
  }

  @Test func factoriesTakeAnyNumberOfRuntimeArguments() throws {
    let container = Container()
    try container.register(Loader.self) { (_, id: Int) in Loader(id: id, name: "", ratio: 0) }
    try container.register(Loader.self) { (_, id: Int, name: String) in
      Loader(id: id, name: name, ratio: 0)
    }
    try container.register(Loader.self) { (_, id: Int, name: String, ratio: Double) in
      Loader(id: id, name: name, ratio: ratio)
    }
    try container.register(Loader.self) { _ in Loader(id: 0, name: "none", ratio: 0) }
    try container.bootstrap()

    #expect(try container.resolve(Loader.self).name == "none")
    #expect(try container.resolve(Loader.self, arguments: 4) == Loader(id: 4, name: "", ratio: 0))
    #expect(
      try container.resolve(Loader.self, arguments: 5, "x") == Loader(id: 5, name: "x", ratio: 0))
    #expect(
      try container.resolve(Loader.self, arguments: 6, "y", 0.5)
        == Loader(id: 6, name: "y", ratio: 0.5))
  }

  @Test func argumentsReachNestedFactoriesThroughTheResolver() throws {
    let container = Container()
    try container.register(Loader.self) { (_, id: Int) in Loader(id: id, name: "inner", ratio: 0) }
    try container.register([Loader].self) { (r, count: Int) in
      try (0..<count).map { try r.resolve(Loader.self, arguments: $0) }
    }
    let loaders = try container.resolve([Loader].self, arguments: 3)
    #expect(loaders.map(\.id) == [0, 1, 2])
  }

  @Test func resolvingWithArgumentsNoRegistrationTakesNamesTheRegisteredSignatures() throws {
    let container = Container()
    try container.register(Loader.self) { (_, id: Int) in Loader(id: id, name: "", ratio: 0) }
    try container.register(Loader.self) { (_, id: Int, name: String) in
      Loader(id: id, name: name, ratio: 0)
    }
    let error = #expect(throws: InjectionError.self) {
      try container.resolve(Loader.self, arguments: "seven")
    }
    guard case .argumentMismatch(let service, let given, let registered, _) = error else {
      Issue.record("expected argumentMismatch, got \(String(describing: error))")
      return
    }
    #expect(service == "Loader")
    #expect(given == "(String)")
    #expect(registered == ["(Int)", "(Int, String)"])
    #expect(error?.description.contains("registered for (Int), (Int, String)") == true)
  }

  @Test func resolvingWithoutTheArgumentsItNeedsIsAMismatch() throws {
    let container = Container()
    try container.register(Loader.self) { (_, id: Int) in Loader(id: id, name: "", ratio: 0) }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Loader.self) }
    guard case .argumentMismatch(_, let given, let registered, _) = error else {
      Issue.record("expected argumentMismatch, got \(String(describing: error))")
      return
    }
    #expect(given == "()")
    #expect(registered == ["(Int)"])
  }
}
