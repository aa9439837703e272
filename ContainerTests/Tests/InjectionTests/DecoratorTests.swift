import KernelTesting
import Testing

@testable import Injection

@Suite struct DecoratorTests {
  @Test func decoratorsStackInRegistrationOrder() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine(name: "core") }
    try container.decorate((any Engine).self) { _, engine in
      LoggingEngine(inner: engine, label: "first")
    }
    try container.decorate((any Engine).self) { _, engine in
      LoggingEngine(inner: engine, label: "second")
    }
    #expect(try container.resolve((any Engine).self).name == "second(first(core))")
  }

  @Test func aDecoratorResolvesWhatItNeeds() throws {
    let container = Container()
    try container.register(String.self) { _ in "from-container" }
    try container.register((any Engine).self) { _ in PetrolEngine(name: "core") }
    try container.decorate((any Engine).self) { r, engine in
      LoggingEngine(inner: engine, label: try r.resolve(String.self))
    }
    #expect(try container.resolve((any Engine).self).name == "from-container(core)")
  }

  @Test func aDecoratedSingletonIsDecoratedOnce() throws {
    let decorated = Counter()
    let container = Container()
    try container.register((any Engine).self, scope: .singleton) { _ in PetrolEngine(name: "core") }
    try container.decorate((any Engine).self) { _, engine in
      decorated.increment()
      return LoggingEngine(inner: engine, label: "once")
    }
    try container.bootstrap()
    for _ in 0..<3 { #expect(try container.resolve((any Engine).self).name == "once(core)") }
    #expect(decorated.value == 1)
  }

  @Test func decoratingCoversEveryArgumentListOfTheTypeAndTag() throws {
    let container = Container()
    try container.register((any Engine).self, tag: "race") { _ in PetrolEngine(name: "plain") }
    try container.register((any Engine).self, tag: "race") { (_, name: String) in
      PetrolEngine(name: name)
    }
    try container.register((any Engine).self) { _ in PetrolEngine(name: "untagged") }
    try container.decorate((any Engine).self, tag: "race") { _, engine in
      LoggingEngine(inner: engine, label: "d")
    }
    #expect(try container.resolve((any Engine).self, tag: "race").name == "d(plain)")
    #expect(try container.resolve((any Engine).self, tag: "race", arguments: "v8").name == "d(v8)")
    #expect(try container.resolve((any Engine).self).name == "untagged")
  }

  @Test func decoratingWhatIsNotRegisteredIsAnError() throws {
    let container = Container()
    let error = #expect(throws: InjectionError.self) {
      try container.decorate((any Engine).self) { _, engine in engine }
    }
    guard case .definitionNotFound(let service, _, _) = error else {
      Issue.record("expected definitionNotFound, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
  }

  @Test func aDecoratorThatThrowsFailsTheResolveNamingTheService() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine() }
    try container.decorate((any Engine).self) { _, _ in throw Boom() }
    let error = #expect(throws: InjectionError.self) { try container.resolve((any Engine).self) }
    guard case .factoryFailed(let service, let underlying, _) = error else {
      Issue.record("expected factoryFailed, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(underlying is Boom)
  }
}
