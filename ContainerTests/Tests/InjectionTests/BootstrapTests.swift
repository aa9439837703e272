import Testing

@testable import Injection

@Suite struct BootstrapTests {
  @Test func registeringAfterBootstrapThrows() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.bootstrap()
    let error = #expect(throws: InjectionError.self) {
      try container.register((any Engine).self) { _ in PetrolEngine() }
    }
    guard case .containerFrozen(let service) = error else {
      Issue.record("expected containerFrozen, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(throws: InjectionError.self) {
      try container.decorate(Wheel.self) { _, wheel in wheel }
    }
    #expect(throws: Never.self) { try container.resolve(Wheel.self) }
  }

  @Test func aFailingEagerSingletonFailsBootstrap() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .eagerSingleton) { _ in throw Boom() }
    let error = #expect(throws: InjectionError.self) { try container.bootstrap() }
    guard case .factoryFailed(let service, _, _) = error else {
      Issue.record("expected factoryFailed, got \(String(describing: error))")
      return
    }
    #expect(service == "Wheel")
  }

  @Test func aChildOfAFrozenContainerStillTakesRegistrations() throws {
    let container = Container()
    try container.bootstrap()
    let child = container.child()
    try child.register(Wheel.self) { _ in Wheel() }
    #expect(throws: Never.self) { try child.resolve(Wheel.self) }
  }

  @Test func aFailedResolvePublishesNoSingleton() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .singleton)
    try container.register(Car.self, scope: .singleton) { r in
      _ = try r.resolve(Wheel.self)
      throw Boom()
    }
    #expect(throws: InjectionError.self) { try container.resolve(Car.self) }
    // The wheel made for the failed graph was dropped: resolving it makes the one singleton.
    let first: Wheel = try container.resolve()
    let second: Wheel = try container.resolve()
    #expect(first === second)
    #expect(made.value == 2)
  }
}
