import Foundation
import KernelTesting
import Testing

@testable import Injection

/// Named resettable scopes (a session), which neither Dip nor Swinject has.
@Suite struct NamedScopeTests {
  @Test func aNamedScopeKeepsItsInstanceUntilReset() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .session)
    let first = try container.resolve(Wheel.self)
    #expect(try container.resolve(Wheel.self) === first)
    container.reset(.session)
    let second = try container.resolve(Wheel.self)
    #expect(second !== first)
    #expect(try container.resolve(Wheel.self) === second)
    #expect(made.value == 2)
  }

  @Test func resettingOneScopeLeavesSingletonsAndOtherScopes() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .singleton) { _ in Wheel() }
    try container.register(Wheel.self, scope: .session, tag: "session") { _ in Wheel() }
    try container.register(Wheel.self, scope: .named("request"), tag: "request") { _ in Wheel() }
    try container.bootstrap()
    let singleton = try container.resolve(Wheel.self)
    let session = try container.resolve(Wheel.self, tag: "session")
    let request = try container.resolve(Wheel.self, tag: "request")
    container.reset(.named("request"))
    #expect(try container.resolve(Wheel.self) === singleton)
    #expect(try container.resolve(Wheel.self, tag: "session") === session)
    #expect(try container.resolve(Wheel.self, tag: "request") !== request)
  }

  @Test func aChildResetsItsOwnCopiesOnly() throws {
    let parent = Container()
    try parent.register(Wheel.self, scope: .session) { _ in Wheel() }
    let child = parent.child()
    let parents = try parent.resolve(Wheel.self)
    let childs = try child.resolve(Wheel.self)
    child.reset(.session)
    #expect(try parent.resolve(Wheel.self) === parents)
    #expect(try child.resolve(Wheel.self) !== childs)
  }

  /// Run under ThreadSanitizer in CI: a reset races no resolve, and none sees half a reset.
  @Test func resettingWhileOtherThreadsResolveIsSafe() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .session) { _ in Wheel() }
    try container.register(Car.self, scope: .session) { r in
      Car(engine: PetrolEngine(), front: try r.resolve(), back: try r.resolve())
    }
    try container.bootstrap()
    let failures = Counter()
    DispatchQueue.concurrentPerform(iterations: 4) { index in
      for _ in 0..<500 {
        if index == 0 {
          container.reset(.session)
        } else if let car = try? container.resolve(Car.self), car.front === car.back {
          continue
        } else {
          failures.increment()
        }
      }
    }
    #expect(failures.value == 0)
    let kept = try container.resolve(Car.self)
    #expect(try container.resolve(Car.self) === kept)
  }

  /// What none of the peers checks: a singleton built from a session instance would keep the
  /// old one after `reset(.session)`, so validation reports it, naming both and the fix.
  @Test func validationReportsWhatWouldOutliveItsSessionDependency() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .session) { _ in Wheel() }
    try container.register((any Engine).self, scope: .unique) { r in
      _ = try r.resolve(Wheel.self)
      return PetrolEngine()
    }
    try container.register(Car.self, scope: .singleton) { r in
      Car(engine: try r.resolve(), front: Wheel(), back: Wheel())
    }
    let error = #expect(throws: InjectionError.self) { try container.validate() }
    guard case .validationFailed(let failures) = error, failures.count == 1,
      case .captiveDependency(let service, let scope, let dependency, let dependencyScope) =
        failures.first
    else {
      Issue.record("expected one captiveDependency, got \(String(describing: error))")
      return
    }
    #expect(
      [service, scope, dependency, dependencyScope] == ["Car", "singleton", "Wheel", "session"])
    #expect(
      failures.first?.description
        == "Car (singleton) is built from Wheel (session), which reset(.session) drops sooner: Car"
        + " would keep the old one. Give Car the scope session, or take a Provider of Wheel and"
        + " resolve it when needed.")
  }

  @Test func theSameScopeAProviderOrALongerLivedDependencyIsFine() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .session) { _ in Wheel() }
    try container.register(PetrolEngine.self, scope: .singleton) { _ in PetrolEngine() }
    try container.register(Car.self, scope: .session) { r in
      Car(engine: try r.resolve(PetrolEngine.self), front: try r.resolve(), back: Wheel())
    }
    try container.register(Parent.self, scope: .singleton) { r in
      let wheels = try r.resolve(Provider<Wheel>.self)
      _ = try wheels()
      return Parent(child: Child())
    }
    try container.validate()
    #expect(
      container.graph.edges.map { "\($0.from) \($0.kind) \($0.to)" }.sorted() == [
        "Car depends PetrolEngine", "Car depends Wheel", "Parent provides Wheel",
      ])
    #expect(container.graph.rendered(as: .text).contains("└─ ↻ Wheel [session]"))
    // A Lazy keeps what it resolves: it is a dependency like any other.
    try container.register(Child.self, scope: .singleton) { r in
      _ = try r.resolve(Lazy<Wheel>.self)
      return Child()
    }
    #expect(throws: InjectionError.self) { try container.validate() }
  }

  @Test func theGraphNamesTheScope() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .session) { _ in Wheel() }
    #expect(container.registrations.first?.scope == .session)
    #expect(container.graph.rendered(as: .text) == "Wheel [session]")
  }
}
