import Testing

@testable import Injection

@Suite struct ChildContainerTests {
  private func parent() throws -> Container {
    let container = Container()
    try container.register((any Engine).self) { _ in PetrolEngine(name: "real") }
    try container.register(Wheel.self, scope: .singleton) { _ in Wheel() }
    try container.autowire(Car.self, scope: .singleton, Car.init(engine:front:back:))
    return container
  }

  @Test func aChildSeesItsParentsRegistrations() throws {
    let child = try parent().child()
    #expect(try child.resolve(Car.self).engine.name == "real")
  }

  @Test func aChildOverridesAndItsInstancesNeverReachTheParent() throws {
    let parent = try parent()
    try parent.bootstrap()
    let child = parent.child()
    try child.register((any Engine).self) { _ in PetrolEngine(name: "fake") }

    let childCar: Car = try child.resolve()
    let parentCar: Car = try parent.resolve()
    #expect(childCar.engine.name == "fake")
    #expect(parentCar.engine.name == "real")
    #expect(childCar !== parentCar)
    #expect(childCar.front !== parentCar.front)
    // Resolving through the parent again still gives the parent's own singleton.
    #expect(try parent.resolve(Car.self) === parentCar)
  }

  @Test func aChildKeepsItsOwnSingletons() throws {
    let parent = try parent()
    let child = parent.child()
    #expect(try child.resolve(Wheel.self) === child.resolve(Wheel.self))
    #expect(try child.resolve(Wheel.self) !== parent.resolve(Wheel.self))
  }

  @Test func aChildDecoratesItsCopyOnly() throws {
    let parent = try parent()
    let child = parent.child()
    try child.decorate((any Engine).self) { _, engine in LoggingEngine(inner: engine, label: "spy")
    }
    #expect(try child.resolve((any Engine).self).name == "spy(real)")
    #expect(try parent.resolve((any Engine).self).name == "real")
  }

  @Test func siblingChildrenInParallelNeverSeeEachOther() async throws {
    let parent = try parent()
    try parent.bootstrap()
    let names = try await withThrowingTaskGroup(of: (String, [String]).self) { group in
      for index in 0..<8 {
        group.addTask {
          let child = parent.child()
          let name = "fake-\(index)"
          try child.register((any Engine).self) { _ in PetrolEngine(name: name) }
          var seen: [String] = []
          for _ in 0..<200 { seen.append(try child.resolve(Car.self).engine.name) }
          return (name, seen)
        }
      }
      return try await group.reduce(into: [(String, [String])]()) { $0.append($1) }
    }
    #expect(names.count == 8)
    for (name, seen) in names { #expect(Set(seen) == Set([name])) }
    #expect(try parent.resolve(Car.self).engine.name == "real")
  }

  @Test func aGrandchildSeesBothAncestors() throws {
    let parent = try parent()
    let child = parent.child()
    try child.register(String.self) { _ in "from child" }
    let grandchild = child.child()
    #expect(try grandchild.resolve(String.self) == "from child")
    #expect(try grandchild.resolve(Car.self).engine.name == "real")
  }
}
