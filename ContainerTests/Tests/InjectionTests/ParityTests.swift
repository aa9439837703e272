import Foundation
import KernelTesting
import Testing

@testable import Injection

/// What users of Dip and Swinject would miss, and what neither has (named scopes: see
/// `NamedScopeTests`): `Lazy` and `Provider`, optional resolution, several property hooks,
/// refusing a weak value, every registration of a type, tags through auto-wiring, `@Injected`.
@Suite struct DeferredResolutionTests {
  @Test func lazyMakesItsInstanceOnFirstUseThenKeepsIt() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .unique)
    let lazy = try container.resolve(Lazy<Wheel>.self)
    #expect(made.value == 0)
    let first = try lazy.instance
    #expect(try lazy.instance === first)
    #expect(made.value == 1)
    // Another Lazy is another first use.
    #expect(try container.resolve(Lazy<Wheel>.self).instance !== first)
  }

  /// Run under ThreadSanitizer in CI: first reads at once all get the one instance kept.
  @Test func firstReadsAtOnceGetOneInstance() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .unique) { _ in Wheel() }
    for _ in 0..<50 {
      let lazy = try container.resolve(Lazy<Wheel>.self)
      let seen = Recorder<ObjectIdentifier>()
      DispatchQueue.concurrentPerform(iterations: 4) { _ in
        if let wheel = try? lazy.instance { seen.append(ObjectIdentifier(wheel)) }
      }
      #expect(seen.all.count == 4)
      #expect(Set(seen.all).count == 1)
      #expect(try seen.all.first == ObjectIdentifier(lazy.instance))
    }
  }

  @Test func providerMakesOnePerCallInTheRegisteredScope() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .unique)
    let provider = try container.resolve(Provider<Wheel>.self)
    #expect(made.value == 0)
    let first = try provider.instance
    let second = try provider()
    #expect(first !== second)
    #expect(made.value == 2)
    try container.register(Engine.self, scope: .singleton) { _ in PetrolEngine() }
    let engines = try container.resolve(Provider<any Engine>.self)
    #expect(try engines.instance as AnyObject === engines.instance as AnyObject)
  }

  @Test func bothAreResolvableUnderATagAndThroughAutowiring() throws {
    struct Garage: Sendable {
      let wheels: Provider<Wheel>
      let engine: Lazy<any Engine>
    }
    let container = Container()
    try container.register(Wheel.self, scope: .unique) { _ in Wheel() }
    try container.register((any Engine).self, tag: "spare") { _ in PetrolEngine(name: "spare") }
    #expect(try container.resolve(Lazy<any Engine>.self, tag: "spare").instance.name == "spare")
    try container.autowire(Garage.self, Garage.init)
    let error = #expect(throws: InjectionError.self) { try container.resolve(Garage.self) }
    #expect(error?.description.contains("No registration for Engine (needed by Garage)") == true)
    try container.register((any Engine).self) { _ in PetrolEngine() }
    let garage = try container.resolve(Garage.self)
    #expect(try garage.engine.instance.name == "petrol")
    // The graph shows what is wrapped, not the wrapper.
    #expect(container.graph.edges.map(\.to).sorted() == ["Engine", "Wheel"])
    #expect(try garage.wheels() !== garage.wheels())
  }

  @Test func aLazyOfAnUnregisteredTypeFailsAtOnceNamingIt() throws {
    let container = Container()
    try container.register(PetrolEngine.self) { _ in PetrolEngine() }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Lazy<Wheel>.self) }
    guard case .definitionNotFound(let service, _, _) = error else {
      Issue.record("expected definitionNotFound, got \(String(describing: error))")
      return
    }
    #expect(service == "Wheel")
    #expect(throws: InjectionError.self) { try container.resolve(Provider<Wheel>.self) }
  }

  @Test func aRegisteredLazyIsUsedAsRegistered() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    let made = Counter()
    try container.register(Lazy<Wheel>.self) { r in
      made.increment()
      return try r.resolve(Lazy<Wheel>.self, tag: nil)
    }
    _ = try? container.resolve(Lazy<Wheel>.self)
    #expect(made.value == 1)
  }
}

@Suite struct OptionalResolutionTests {
  @Test func anOptionalIsTheRegisteredInstanceOrNil() throws {
    let container = Container()
    try container.register(Wheel.self, scope: .singleton) { _ in Wheel() }
    let wheel: Wheel? = try container.resolve()
    #expect(wheel === (try container.resolve(Wheel.self)))
    let engine: (any Engine)? = try container.resolve()
    #expect(engine == nil)
    #expect(try container.resolve(Wheel?.self, tag: "spare") == nil)
    // What is required still throws.
    #expect(throws: InjectionError.self) { try container.resolve((any Engine).self) }
  }

  @Test func aRegisteredTypeWhoseFactoryFailsStillThrows() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in throw Boom() }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Wheel?.self) }
    #expect(error?.description.contains("the disk is full") == true)
  }

  @Test func autowirePassesNilForAnOptionalParameterWithNoRegistration() throws {
    final class Dashboard: Sendable {
      let engine: (any Engine)?
      let wheel: Wheel?
      init(engine: (any Engine)?, wheel: Wheel?) {
        self.engine = engine
        self.wheel = wheel
      }
    }
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.autowire(Dashboard.self, Dashboard.init)
    let dashboard = try container.resolve(Dashboard.self)
    #expect(dashboard.engine == nil)
    #expect(dashboard.wheel != nil)
    #expect(
      container.graph.edges.map { "\($0.from) \($0.kind) \($0.to)" } == ["Dashboard depends Wheel"])
  }

  @Test func anOptionalSharesTheResolvesSharedInstance() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.register(Car.self) { r in
      let front: Wheel? = try r.resolve()
      return Car(engine: PetrolEngine(), front: try r.resolve(), back: front ?? Wheel())
    }
    let car = try container.resolve(Car.self)
    #expect(car.front === car.back)
  }
}

@Suite struct PropertyHookTests {
  @Test func everyHookRunsInTheOrderAdded() throws {
    let container = Container()
    let order = Recorder<String>()
    try container.register(Wheel.self) { _ in Wheel() }
      .resolvingProperties { _, _ in order.append("first") }
      .resolvingProperties { _, _ in order.append("second") }
      .resolvingProperties { _, _ in order.append("third") }
    try container.decorate(Wheel.self) { _, wheel in wheel }
    _ = try container.resolve(Wheel.self)
    #expect(order.all == ["first", "second", "third"])
    let info = try #require(container.registrations.first)
    #expect(info.hooks == 3)
    #expect(info.decorators == 1)
    #expect(container.graph.rendered(as: .text) == "Wheel [shared, 1 decorator(s), 3 hook(s)]")
  }
}

@Suite struct WrongAnswerTests {
  /// Refused when first built (so by `validate()`): whether a type is a value is known from
  /// what its factory builds (`is AnyObject.Type`), not from reading its metadata.
  @Test func aValueTypeIsRefusedAsAWeakSingleton() throws {
    let container = Container()
    try container.register(Int.self, scope: .weakSingleton) { _ in 1 }
    let error = #expect(throws: InjectionError.self) { try container.resolve(Int.self) }
    #expect(
      error?.description
        == "Int cannot be a weakSingleton: Int is a value type, which nothing holds weakly, so it"
        + " would be made anew on every resolve. Register it as singleton, a named scope or"
        + " unique, or make it a class.")
    try container.register(LoggingEngine.self, scope: .weakSingleton) { _ in
      LoggingEngine(inner: PetrolEngine(), label: "x")
    }
    #expect(throws: InjectionError.self) { try container.validate() }
    // A class, and a protocol (which may hold one), are accepted.
    try container.register(Wheel.self, scope: .weakSingleton) { _ in Wheel() }
    try container.register((any Engine).self, scope: .weakSingleton) { _ in PetrolEngine() }
    let engine = try container.resolve((any Engine).self)
    #expect(try container.resolve((any Engine).self) as AnyObject === engine as AnyObject)
  }

  @Test func aProtocolWeakSingletonThatBuildsAValueFailsNamingIt() throws {
    let container = Container()
    try container.register((any Engine).self, scope: .weakSingleton) { _ in
      LoggingEngine(inner: PetrolEngine(), label: "x")
    }
    let error = #expect(throws: InjectionError.self) { try container.resolve((any Engine).self) }
    guard case .weakSingletonOfValue(let service, let type) = error else {
      Issue.record("expected weakSingletonOfValue, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(type == "LoggingEngine")
  }

  @Test func decoratingAForwardedTypeSaysWhyNotAndWhatToDo() throws {
    let container = Container()
    try container.register(PetrolEngine.self, scope: .singleton) { _ in PetrolEngine() }
      .implements((any Engine).self)
    let error = #expect(throws: InjectionError.self) {
      try container.decorate((any Engine).self) { _, engine in engine }
    }
    guard case .decoratingForwardedType(let service, let target) = error else {
      Issue.record("expected decoratingForwardedType, got \(String(describing: error))")
      return
    }
    #expect(service == "Engine")
    #expect(target == "PetrolEngine")
    #expect(error?.description.contains("Decorate PetrolEngine") == true)
  }
}

@Suite struct ResolveAllTests {
  @Test func everyRegistrationOfATypeInRegistrationOrder() throws {
    let container = Container()
    try container.register((any Engine).self, tag: "b") { _ in PetrolEngine(name: "b") }
    try container.register((any Engine).self) { _ in PetrolEngine(name: "untagged") }
    try container.register((any Engine).self, tag: "a") { _ in PetrolEngine(name: "a") }
    try container.register(PetrolEngine.self) { _ in PetrolEngine(name: "forwarded") }
      .implements((any Engine).self, tag: "c")
    // Taking arguments, it cannot be resolved without them: not listed.
    try container.register((any Engine).self) { (_, name: String) in PetrolEngine(name: name) }
    // A later registration under a key replaces the earlier in its place.
    try container.register((any Engine).self, tag: "b") { _ in PetrolEngine(name: "b2") }
    #expect(
      try container.resolveAll((any Engine).self).map(\.name) == [
        "b2", "untagged", "a", "forwarded",
      ])
    try container.bootstrap()
    #expect(
      try container.resolveAll((any Engine).self).map(\.name) == [
        "b2", "untagged", "a", "forwarded",
      ])
    #expect(try container.resolveAll(Wheel.self).isEmpty)
  }

  @Test func aChildsOverrideTakesItsParentsPlace() throws {
    let parent = Container()
    try parent.register((any Engine).self, tag: 1) { _ in PetrolEngine(name: "one") }
    try parent.register((any Engine).self, tag: 2) { _ in PetrolEngine(name: "two") }
    let child = parent.child()
    try child.register((any Engine).self, tag: 3) { _ in PetrolEngine(name: "three") }
    try child.register((any Engine).self, tag: 1) { _ in PetrolEngine(name: "one, faked") }
    #expect(try child.resolveAll((any Engine).self).map(\.name) == ["one, faked", "two", "three"])
    #expect(try parent.resolveAll((any Engine).self).map(\.name) == ["one", "two"])
  }

  @Test func aFactoryResolvesAllSharingItsResolve() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    try container.register(Wheel.self, tag: "spare") { _ in Wheel() }
    try container.register(Car.self) { r in
      let wheels = try r.resolveAll(Wheel.self)
      return Car(engine: PetrolEngine(), front: wheels[0], back: try r.resolve())
    }
    let car = try container.resolve(Car.self)
    #expect(car.front === car.back)
    #expect(
      container.graph.edges.contains { $0.from == "Car" && $0.to == "Wheel tagged \"spare\"" })
  }
}

@Suite struct AutowiredTagTests {
  final class Pump: Sendable {
    let engine: any Engine
    let wheel: Wheel
    let spare: (any Engine)?
    init(engine: any Engine, wheel: Wheel, spare: (any Engine)?) {
      self.engine = engine
      self.wheel = wheel
      self.spare = spare
    }
  }

  @Test func parametersTakeTheTagFirstThenUntagged() throws {
    let container = Container()
    let untaggedWheel = Wheel()
    try container.register((any Engine).self) { _ in PetrolEngine(name: "plain") }
    try container.register((any Engine).self, tag: "race") { _ in PetrolEngine(name: "race") }
    try container.register(Wheel.self, scope: .singleton) { _ in untaggedWheel }
    try container.autowire(Pump.self, tag: "race", Pump.init)
    try container.autowire(Pump.self, Pump.init)
    let race = try container.resolve(Pump.self, tag: "race")
    #expect(race.engine.name == "race")
    #expect(race.wheel === untaggedWheel)
    #expect(race.spare?.name == "race")
    let plain = try container.resolve(Pump.self)
    #expect(plain.engine.name == "plain")
    #expect(plain.spare?.name == "plain")
  }
}

@Suite struct InjectedTests {
  struct Greeter {
    @Injected var engine: (any Engine)?
    @Injected(tag: "spare") var spare: Wheel?
  }

  @Test func aWrapperResolvesFromTheContainerCurrentForTheTask() async throws {
    let container = Container()
    try container.register((any Engine).self, scope: .singleton) { _ in PetrolEngine() }
    try container.register(Wheel.self, tag: "spare") { _ in Wheel() }
    let test = container.child()
    try test.register((any Engine).self) { _ in PetrolEngine(name: "double") }
    let real = container.makeCurrent { Greeter() }
    #expect(real.engine?.name == "petrol")
    #expect(real.spare != nil)
    #expect(real.$engine == nil)
    #expect(test.makeCurrent { Greeter() }.engine?.name == "double")
    // Inherited by the tasks it starts.
    let name = await test.makeCurrent {
      await Task { Greeter().engine?.name }.value
    }
    #expect(name == "double")
    #expect(Container.current == nil)
  }

  @Test func withoutACurrentContainerItIsNilAndSaysWhatToDo() throws {
    let greeter = Greeter()
    #expect(greeter.engine == nil)
    #expect(
      greeter.$engine?.description
        == "No container is current for this task to resolve Engine. Run the code inside"
        + " container.makeCurrent { ... } (a child's, in a test), or resolve it from a container"
        + " directly.")
  }

  @Test func whatIsNotRegisteredOrFailsIsNilWithItsReason() throws {
    let container = Container()
    try container.register(Wheel.self, tag: "spair") { _ in Wheel() }
    try container.register((any Engine).self) { _ in throw Boom() }
    let greeter = container.makeCurrent { Greeter() }
    #expect(greeter.spare == nil)
    guard case .definitionNotFound(let service, _, let closest) = greeter.$spare else {
      Issue.record("expected definitionNotFound, got \(String(describing: greeter.$spare))")
      return
    }
    #expect(service == "Wheel tagged \"spare\"")
    #expect(closest == ["Wheel tagged \"spair\""])
    #expect(greeter.engine == nil)
    #expect(greeter.$engine?.description.contains("the disk is full") == true)
  }
}
