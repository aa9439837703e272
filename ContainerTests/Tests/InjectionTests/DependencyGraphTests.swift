import Testing

@testable import Injection

@Suite struct DependencyGraphTests {
  private func container() throws -> Container {
    let container = Container()
    try container.register(PetrolEngine.self, scope: .singleton) { _ in PetrolEngine() }
      .implements((any Engine).self)
    try container.register(Wheel.self) { _ in Wheel() }
    try container.autowire(Car.self, scope: .unique, Car.init(engine:front:back:))
    try container.decorate(Car.self) { _, car in car }
    return container
  }

  @Test func registrationsListEveryKeyWithScopeForwardingAndDecorators() throws {
    let registrations = try container().registrations
    #expect(registrations.map(\.service) == ["Car", "Engine", "PetrolEngine", "Wheel"])
    #expect(registrations.first { $0.service == "Car" }?.decorators == 1)
    #expect(registrations.first { $0.service == "Car" }?.scope == .unique)
    #expect(registrations.first { $0.service == "Engine" }?.forwardsTo == "PetrolEngine")
  }

  @Test func aConstrainedExistentialIsNamedAsItIsWritten() throws {
    let container = Container()
    try container.register((any Clock<Duration>).self) { _ in ContinuousClock() }
    #expect(container.registrations.map(\.service) == ["Clock<Duration>"])
    #expect(
      Key.readable("any Dictionary<Self.Key == String, Self.Value == Int>")
        == "Dictionary<String, Int>")
    #expect(Key.readable("Car") == "Car")
  }

  @Test func edgesAreThoseObservedWhileResolving() throws {
    let container = try container()
    #expect(container.graph.edges.filter { $0.kind == "depends" }.isEmpty)
    try container.validate()
    let edges = container.graph.edges.map { "\($0.from) \($0.kind) \($0.to)" }
    #expect(edges == ["Car depends Engine", "Car depends Wheel", "Engine forwards PetrolEngine"])
  }

  @Test func theGraphRendersAsTextDotAndMermaid() throws {
    let container = try container()
    try container.validate()
    let graph = container.graph
    #expect(
      graph.rendered(as: .text) == """
        Car [unique, 1 decorator(s)]
        ├─ Engine [singleton]
        │  └─ ⇢ PetrolEngine [singleton]
        └─ Wheel [shared]
        """)
    let dot = graph.rendered(as: .dot)
    #expect(dot.hasPrefix("digraph dependencies {"))
    #expect(dot.contains("\"Car\" -> \"Wheel\";"))
    // A label's two lines, the break written as DOT's `\n`, not an escaped backslash.
    #expect(dot.contains(#"  "Car" [label="Car\nunique"];"#), "\(dot)")
    #expect(dot.contains("\"Engine\" -> \"PetrolEngine\" [style=dashed];"))
    let mermaid = graph.rendered(as: .mermaid)
    #expect(mermaid.hasPrefix("graph LR"))
    #expect(mermaid.contains("n0[\"Car · unique\"]"))
    #expect(mermaid.contains("n0 --> n3"))
    #expect(mermaid.contains("n1 -.-> n2"))
  }

  /// Mermaid takes a label for HTML, so a generic type's `<…>` is written in its entity codes.
  @Test func aGenericServiceKeepsItsTypeArgumentsInMermaid() throws {
    let container = Container()
    try container.register((any Clock<Duration>).self) { _ in ContinuousClock() }
    let mermaid = container.graph.rendered(as: .mermaid)
    #expect(mermaid.contains(#"n0["Clock#lt;Duration#gt; · shared"]"#), "\(mermaid)")
  }
}
