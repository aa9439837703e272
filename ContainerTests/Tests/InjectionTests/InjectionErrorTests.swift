import Testing

@testable import Injection

@Suite struct InjectionErrorTests {
  @Test func notFoundNamesTypeTagPathAndClosestKeys() throws {
    final class MovieServise: Sendable {}
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.register(Car.self) { r in
      Car(engine: try r.resolve(), front: try r.resolve(), back: try r.resolve())
    }
    try container.register((any Engine).self, tag: "backup") { _ in PetrolEngine() }

    let error = #expect(throws: InjectionError.self) { try container.resolve(Car.self) }
    #expect(
      error?.description
        == "No registration for Engine (needed by Car). Registered and close to it: "
        + "Engine tagged \"backup\". Register it (container.register(...)) or override it in "
        + "the test's child container.")
  }

  @Test func notFoundSuggestsTypeNamesWithinASmallEditDistance() throws {
    struct Settings: Sendable {}
    struct Setting: Sendable {}
    let container = Container()
    try container.register(Settings.self) { _ in Settings() }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Setting.self) }
    guard case .definitionNotFound(_, let path, let closest) = error else {
      Issue.record("expected definitionNotFound, got \(String(describing: error))")
      return
    }
    #expect(path.isEmpty)
    #expect(closest == ["Settings"])
  }

  @Test func aFailingFactoryCarriesItsErrorAndPath() throws {
    let container = Container()
    try container.register((any Engine).self) { _ in throw Boom() }
    try container.register(Wheel.self) { _ in Wheel() }
    try container.autowire(Car.self, Car.init(engine:front:back:))
    let error = #expect(throws: InjectionError.self) { try container.resolve(Car.self) }
    guard case .factoryFailed(let service, let underlying, let path) = error else {
      Issue.record("expected factoryFailed, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(underlying is Boom)
    #expect(path == ["Car"])
    #expect(error?.description == "Building Engine failed (needed by Car): the disk is full")
  }

  @Test func descriptionsTellTheFix() {
    let cases: [(InjectionError, String)] = [
      (.circularDependency(path: ["A", "B", "A"]), "resolvingProperties"),
      (.containerFrozen(service: "A"), "Register before bootstrap(), or in a child container"),
      (.missingSampleArguments(service: "A", signature: "(Int)"), ".validating(with: ...)"),
      (.forwardingMismatch(service: "A", forwardedTo: "P"), "Forward only to protocols"),
      (.weakSingletonOfValue(service: "A", type: "A"), "Register it as singleton"),
      (.decoratingForwardedType(service: "P", forwardsTo: "A"), "Decorate A"),
      (.noCurrentContainer(service: "A"), "container.makeCurrent"),
      (
        .argumentMismatch(service: "A", given: "()", registered: ["(Int)"], path: []),
        "Pass the arguments"
      ),
    ]
    for (error, fix) in cases { #expect(error.description.contains(fix), "\(error)") }
  }
}
