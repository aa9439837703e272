import KernelTesting
import Testing

@testable import Injection

@Suite struct CircularDependencyTests {
  /// Registers Parent(child:) and Child, whose `parent` is set by property injection.
  private func container(parentScope: Scope, childScope: Scope) throws -> Container {
    let container = Container()
    try container.register(Parent.self, scope: parentScope) { r in Parent(child: try r.resolve()) }
    try container.register(Child.self, scope: childScope) { _ in Child() }
      .resolvingProperties { r, child in child.parent = try r.resolve(Parent.self) }
    return container
  }

  @Test(arguments: [Scope.shared, .singleton])
  func propertyInjectionClosesACycle(scope: Scope) throws {
    let container = try container(parentScope: .shared, childScope: scope)
    let child: Child = try container.resolve()
    let parent = try #require(child.parent)
    #expect(parent.child === child)
  }

  @Test func propertyInjectionClosesACycleBetweenSingletons() throws {
    let container = try container(parentScope: .singleton, childScope: .singleton)
    let parent: Parent = try container.resolve()
    let child: Child = try container.resolve()
    #expect(parent.child === child)
    #expect(child.parent === parent)
  }

  @Test func aCycleThroughInitializersIsReportedWithItsPath() throws {
    final class A: Sendable { init(_: B) {} }
    final class B: Sendable { init(_: C) {} }
    final class C: Sendable { init(_: A) {} }
    let container = Container()
    try container.register(A.self) { r in A(try r.resolve()) }
    try container.register(B.self) { r in B(try r.resolve()) }
    try container.register(C.self) { r in C(try r.resolve()) }
    let error = #expect(throws: InjectionError.self) { try container.resolve(B.self) }
    guard case .circularDependency(let path) = error else {
      Issue.record("expected circularDependency, got \(String(describing: error))")
      return
    }
    #expect(path == ["B", "C", "A", "B"])
    #expect(error?.description.contains("B → C → A → B") == true)
  }

  @Test func aSingletonCycleMakesNoSingletonAndNoSecondAttempt() throws {
    final class A: Sendable { init(_: B) {} }
    final class B: Sendable { init(_: A) {} }
    let madeA = Counter()
    let container = Container()
    try container.register(A.self, scope: .singleton) { r in
      madeA.increment()
      return A(try r.resolve())
    }
    try container.register(B.self, scope: .singleton) { r in B(try r.resolve()) }
    for _ in 0..<2 {
      let error = #expect(throws: InjectionError.self) { try container.resolve(A.self) }
      guard case .circularDependency(let path) = error else {
        Issue.record("expected circularDependency, got \(String(describing: error))")
        return
      }
      #expect(path == ["A", "B", "A"])
    }
    // One factory call per attempt: the cycle is caught before A's factory runs again.
    #expect(madeA.value == 2)
  }

  /// A hook assigning an optional property resolves the property's type (`Parent?` asks for
  /// `Parent`, or nil when none is registered): once, this asked for `Optional<Parent>` and
  /// failed.
  @Test func resolvingIntoAnOptionalPropertyResolvesTheType() throws {
    let container = Container()
    try container.register(Parent.self) { r in Parent(child: try r.resolve()) }
    try container.register(Child.self) { _ in Child() }
      .resolvingProperties { r, child in child.parent = try r.resolve() }
    let child = try container.resolve(Child.self)
    #expect(child.parent?.child === child)
  }

  @Test func aServiceThatNeedsItselfIsACycle() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .unique) { r in try r.resolve(Wheel.self) }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Wheel.self) }
    guard case .circularDependency(let path) = error else {
      Issue.record("expected circularDependency, got \(String(describing: error))")
      return
    }
    #expect(path == ["Wheel", "Wheel"])
  }
}
