import Testing

@testable import Injection

@Suite struct ScopeTests {
  @Test func uniqueMakesANewInstanceForEveryResolve() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .unique) { _ in Wheel() }
    let first: Wheel = try container.resolve()
    let second: Wheel = try container.resolve()
    #expect(first !== second)
  }

  @Test func sharedIsOneInstancePerTopLevelResolve() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .shared) { _ in Wheel() }
    try container.register((any Engine).self) { _ in PetrolEngine() }
    try container.register(Car.self, scope: .unique) { r in
      Car(engine: try r.resolve(), front: try r.resolve(), back: try r.resolve())
    }
    let car: Car = try container.resolve()
    let other: Car = try container.resolve()
    #expect(car.front === car.back)
    #expect(car.front !== other.front)
  }

  @Test func sharedIsTheDefaultScope() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    #expect(container.registrations.first?.scope == .shared)
  }

  @Test func singletonIsMadeOnceAndLazily() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .singleton)
    #expect(made.value == 0)
    let first: Wheel = try container.resolve()
    let second: Wheel = try container.resolve()
    #expect(first === second)
    #expect(made.value == 1)
  }

  @Test func eagerSingletonIsMadeByBootstrap() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .eagerSingleton)
    #expect(made.value == 0)
    try container.bootstrap()
    #expect(made.value == 1)
    let first: Wheel = try container.resolve()
    let second: Wheel = try container.resolve()
    #expect(first === second)
    #expect(made.value == 1)
  }

  @Test func weakSingletonLivesWhileHeldAndIsRemadeAfter() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .weakSingleton)
    do {
      let held: Wheel = try container.resolve()
      let again: Wheel = try container.resolve()
      #expect(held === again)
      #expect(made.value == 1)
    }
    // Nothing holds the first wheel any more, so the container makes a new one.
    let _: Wheel = try container.resolve()
    #expect(made.value == 2)
  }
}
