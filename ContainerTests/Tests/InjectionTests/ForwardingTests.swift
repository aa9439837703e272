import KernelTesting
import Testing

@testable import Injection

@Suite struct ForwardingTests {
  @Test func oneSingletonServesEveryForwardedType() throws {
    let made = Counter()
    let container = Container()
    try container.register(PetrolEngine.self, scope: .singleton) { _ in
      made.increment()
      return PetrolEngine()
    }
    .implements((any Engine).self)
    .implements((any Startable).self)
    try container.bootstrap()

    let concrete: PetrolEngine = try container.resolve()
    let engine: any Engine = try container.resolve()
    let startable: any Startable = try container.resolve()
    let engineIdentity = ObjectIdentifier(engine as AnyObject)
    let startableIdentity = ObjectIdentifier(startable as AnyObject)
    #expect(engineIdentity == ObjectIdentifier(concrete))
    #expect(startableIdentity == ObjectIdentifier(concrete))
    #expect(made.value == 1)
  }

  @Test func forwardedTypesShareTheSharedInstanceWithinOneResolve() throws {
    struct Pair: Sendable {
      let engine: any Engine
      let startable: any Startable
    }
    let container = Container()
    try container.register(PetrolEngine.self, scope: .shared) { _ in PetrolEngine() }
      .implements((any Engine).self)
      .implements((any Startable).self)
    try container.register(Pair.self, scope: .unique) { r in
      Pair(engine: try r.resolve(), startable: try r.resolve())
    }
    let first: Pair = try container.resolve()
    let second: Pair = try container.resolve()
    let firstEngine = ObjectIdentifier(first.engine as AnyObject)
    let firstStartable = ObjectIdentifier(first.startable as AnyObject)
    let secondEngine = ObjectIdentifier(second.engine as AnyObject)
    #expect(firstEngine == firstStartable)
    #expect(firstEngine != secondEngine)
  }

  @Test func forwardingKeepsTheTagAndArguments() throws {
    let container = Container()
    try container.register(PetrolEngine.self, tag: "race") { (_, name: String) in
      PetrolEngine(name: name)
    }
    .implements((any Engine).self)
    let engine = try container.resolve((any Engine).self, tag: "race", arguments: "v8")
    #expect(engine.name == "v8")
  }

  @Test func forwardingToATypeTheInstanceDoesNotAdoptIsReported() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }.implements((any Engine).self)
    let error = #expect(throws: InjectionError.self) { try container.resolve((any Engine).self) }
    guard case .forwardingMismatch(let service, let forwardedTo) = error else {
      Issue.record("expected forwardingMismatch, got \(String(describing: error))")
      return
    }
    #expect(service == "Wheel")
    #expect(forwardedTo == "Engine")
  }
}
