import Foundation
import KernelTesting
import Testing

@testable import Injection

/// A client and a server that inject each other: a cycle through `@Injected` properties.
/// Unchecked `Sendable`: the wrapper is set once, in `init`, and never written after.
private final class Client: @unchecked Sendable {
  @Injected var server: Server?
}

private final class Server: @unchecked Sendable {
  @Injected var client: Client?
}

/// A singleton that keeps a `Lazy` and a `Provider` of what it needs later.
private final class Holder: Sendable {
  let wheel: Lazy<Wheel>
  let wheels: Provider<Wheel>
  init(wheel: Lazy<Wheel>, wheels: Provider<Wheel>) {
    self.wheel = wheel
    self.wheels = wheels
  }
}

/// Keeps the resolver its factory was given, to resolve with after the resolve: a misuse the
/// container survives. Unchecked `Sendable`: the test reads it on one thread.
private final class KeptResolver: @unchecked Sendable {
  let resolver: Resolver
  init(_ resolver: Resolver) { self.resolver = resolver }
}

/// How long what the container makes lives, and what outlives the container.
@Suite struct LifetimeTests {
  /// The cycle recursed until the stack overflowed (SIGSEGV); the property that closes it is
  /// now nil, and says the cycle's path.
  @Test func aCycleThroughInjectedPropertiesIsRefusedNamingItsPath() throws {
    let container = Container()
    try container.register(Client.self) { _ in Client() }
    try container.register(Server.self) { _ in Server() }
    let client = try container.makeCurrent { try container.resolve(Client.self) }
    let server = try #require(client.server)
    let inner = try #require(server.client)
    #expect(inner.server == nil)
    guard case .circularDependency(let path)? = inner.$server else {
      Issue.record("expected a circular dependency, got \(String(describing: inner.$server))")
      return
    }
    #expect(path.count == 3 && path.first == path.last, "\(path)")
    #expect(path.contains { $0.contains("Server") } && path.contains { $0.contains("Client") })
  }

  /// A singleton that kept a `Lazy` or `Provider` kept its container alive for ever; they hold
  /// it weakly now, and say so when read after it is gone.
  @Test func lazyAndProviderDoNotKeepTheirContainerAlive() throws {
    weak var released: Container?
    let holder: Holder
    do {
      let container = Container()
      try container.register(Wheel.self) { _ in Wheel() }
      try container.register(Holder.self, scope: .singleton) { r in
        Holder(wheel: try r.resolve(), wheels: try r.resolve())
      }
      holder = try container.resolve(Holder.self)
      released = container
    }
    #expect(released == nil)
    #expect {
      _ = try holder.wheel.instance
    } throws: { error in
      guard case .containerReleased(let service)? = error as? InjectionError else { return false }
      return service == "Lazy<Wheel>"
        && "\(error)".contains("was read after its container was released")
    }
    #expect(throws: InjectionError.self) { _ = try holder.wheels() }
  }

  /// A resolve does not retain its container (whoever started it holds it); a factory that
  /// kept its resolver past the resolve finds the container there after every other reference
  /// to it is gone, and a resolve that kept none leaves nothing holding it. Run under
  /// AddressSanitizer and ThreadSanitizer in CI.
  @Test func aResolverKeptPastItsResolveKeepsItsContainer() throws {
    weak var released: Container?
    weak var keptAlive: Container?
    let kept: KeptResolver
    do {
      let container = Container()
      try container.register(Wheel.self) { _ in Wheel() }
      try container.register(KeptResolver.self) { r in KeptResolver(r) }
      kept = try container.resolve(KeptResolver.self)
      keptAlive = container
    }
    do {
      let container = Container()
      try container.register(Wheel.self) { _ in Wheel() }
      _ = try container.resolve(Wheel.self)
      released = container
    }
    #expect(released == nil)
    #expect(keptAlive != nil)
    #expect(kept.resolver.container === keptAlive)
    // It still resolves, from the container it keeps.
    _ = try kept.resolver.resolve(Wheel.self)
  }

  @Test func aLazyReadWhileItsContainerLivesKeepsItsInstanceAfter() throws {
    let container = Container()
    try container.register(Wheel.self) { _ in Wheel() }
    let lazy: Lazy<Wheel> = try container.resolve()
    let first = try lazy.instance
    #expect(try lazy.instance === first)
  }

  /// `reset(.weakSingleton)` compiled and dropped nothing: it drops the weak singletons now,
  /// even while someone still holds the old one, and leaves the other scopes alone.
  @Test func resettingWeakSingletonsMakesThemAnew() throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .weakSingleton)
    try container.register(Wheel.self, scope: .singleton, tag: "other") { _ in Wheel() }
    try container.bootstrap()
    let first = try container.resolve(Wheel.self)
    let other = try container.resolve(Wheel.self, tag: "other")
    #expect(try container.resolve(Wheel.self) === first)
    container.reset(.weakSingleton)
    let second = try container.resolve(Wheel.self)
    #expect(second !== first)
    #expect(made.value == 2)
    #expect(try container.resolve(Wheel.self) === second)
    #expect(try container.resolve(Wheel.self, tag: "other") === other)
  }

  /// `reset(.singleton)` compiled and dropped nothing; a singleton lives as long as its
  /// container, so now it does not compile. Checked with the compiler against the modules this
  /// test was built with; `reset(.session)` beside it compiles.
  @Test func resettingSingletonsDoesNotCompile() async throws {
    let modules = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent("Modules")
    #expect(
      FileManager.default.fileExists(
        atPath: modules.appendingPathComponent("Injection.swiftmodule").path))
    func typecheck(_ line: String) async throws -> (status: Int32, errors: String) {
      let file = FileManager.default.temporaryDirectory
        .appendingPathComponent("reset-\(UUID().uuidString).swift")
      try "import Injection\nfunc check(_ container: Container) { \(line) }\n"
        .write(to: file, atomically: true, encoding: .utf8)
      defer { try? FileManager.default.removeItem(at: file) }
      let process = try await ChildProcess(
        URL(fileURLWithPath: "/usr/bin/env"),
        arguments: ["swiftc", "-typecheck", "-I", modules.path, file.path], stdout: .null)
      let errors = Reader(process.standardError)
      await process.exited()
      return (process.terminationStatus, errors.text())
    }
    let session = try await typecheck(
      "container.reset(.session); container.reset(.named(\"cart\"))")
    #expect(session.status == 0, "\(session.errors)")
    for scope in ["singleton", "eagerSingleton"] {
      let refused = try await typecheck("container.reset(.\(scope))")
      #expect(refused.status != 0)
      #expect(refused.errors.contains("ResettableScope"), "\(refused.errors)")
    }
  }

  /// `Lazy<Dog>` with arguments said "No registration for Lazy<Dog> with arguments (String,
  /// Int)" although `Dog` is registered with exactly those.
  @Test func aLazyOrProviderWithArgumentsSaysPlainlyItTakesNone() throws {
    struct Dog: Sendable {
      let name: String
      let age: Int
    }
    let container = Container()
    try container.register(Dog.self) { (_, name: String, age: Int) in Dog(name: name, age: age) }
    #expect(try container.resolve(Dog.self, arguments: "Rex", 3).age == 3)
    #expect {
      _ = try container.resolve(Lazy<Dog>.self, arguments: "Rex", 3)
    } throws: { error in
      "\(error)"
        == "Lazy<Dog> takes no runtime arguments, so it cannot be resolved with (String, Int):"
        + " resolve Dog with its arguments directly, or register a factory closure and take a"
        + " Provider of that."
    }
    #expect {
      _ = try container.resolve(Provider<Dog>.self, arguments: "Rex", 3)
    } throws: { error in
      "\(error)".hasPrefix("Provider<Dog> takes no runtime arguments")
    }
  }
}
