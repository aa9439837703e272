import Testing

@testable import Injection

@Suite struct AutowiringTests {
  @Test func anInitializerGetsEveryParameterFromTheContainer() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine(name: "wired") }
    try container.register(Wheel.self, scope: .shared) { _ in Wheel() }
    try container.autowire(Car.self, Car.init(engine:front:back:))

    let car: Car = try container.resolve()
    #expect(car.engine.name == "wired")
    #expect(car.front === car.back)
  }

  @Test func autowiringReportsTheMissingParameterWithItsPath() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.autowire(Car.self, Car.init(engine:front:back:))
    let error = #expect(throws: InjectionError.self) { try container.resolve(Car.self) }
    guard case .definitionNotFound(let service, let path, _) = error else {
      Issue.record("expected definitionNotFound, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(path == ["Car"])
  }

  @Test func autowiringTakesScopeAndTag() throws {
    let container = Container()
    try container.autowire(Wheel.self, scope: .singleton, tag: "spare", Wheel.init)
    let first = try container.resolve(Wheel.self, tag: "spare")
    let second = try container.resolve(Wheel.self, tag: "spare")
    #expect(first === second)
  }
}
