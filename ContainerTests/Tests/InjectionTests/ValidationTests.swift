import Testing

@testable import Injection

@Suite struct ValidationTests {
  @Test func validationPassesWhenEveryRegistrationResolves() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine() }
    try container.register(Wheel.self) { _ in Wheel() }
    try container.autowire(Car.self, Car.init(engine:front:back:))
    try container.register(String.self) { (_, id: Int) in "loader \(id)" }.validating(with: 1)
    try container.validate()
  }

  @Test func validationReportsEveryFailureAtOnce() throws {
    let container = Container()
    try container.autowire(Car.self, Car.init(engine:front:back:))  // needs Engine and Wheel
    try container.register(Wheel.self) { _ in throw Boom() }
    try container.register(String.self) { (_, id: Int) in "loader \(id)" }  // no samples
    try container.register(Int.self) { _ in 42 }  // fine

    let error = #expect(throws: InjectionError.self) { try container.validate() }
    guard case .validationFailed(let failures) = error else {
      Issue.record("expected validationFailed, got \(String(describing: error))")
      return
    }
    #expect(failures.count == 3)
    let text = error?.description ?? ""
    #expect(text.contains("3 invalid registration(s)"))
    #expect(text.contains("No registration for Engine (needed by Car)"))
    #expect(text.contains("Building Wheel failed: the disk is full"))
    #expect(text.contains("String with arguments (Int) takes runtime arguments (Int)"))
  }

  @Test func sampleArgumentsMustMatchTheRegistration() throws {
    let container = Container()
    let registration = try container.register(String.self) { (_, id: Int) in "loader \(id)" }
    let error = #expect(throws: InjectionError.self) { try registration.validating(with: "one") }
    guard case .argumentMismatch(_, let given, let registered, _) = error else {
      Issue.record("expected argumentMismatch, got \(String(describing: error))")
      return
    }
    #expect(given == "(String)")
    #expect(registered == ["(Int)"])
  }

  @Test func validationChecksAChildWithItsOverrides() throws {
    let parent = Container()
    try parent.autowire(Car.self, Car.init(engine:front:back:))
    try parent.register(Wheel.self) { _ in Wheel() }
    #expect(throws: InjectionError.self) { try parent.validate() }
    let child = parent.child()
    try child.register((any Engine).self) { _ in PetrolEngine() }
    try child.validate()
  }
}
