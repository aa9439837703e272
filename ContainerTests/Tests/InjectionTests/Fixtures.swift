import KernelTesting
import Synchronization

@testable import Injection

protocol Engine: Sendable {
  var name: String { get }
}
protocol Startable: Sendable {}

final class PetrolEngine: Engine, Startable {
  let name: String
  init(name: String = "petrol") { self.name = name }
}

final class Wheel: Sendable {}

final class Car: Sendable {
  let engine: any Engine
  let front: Wheel
  let back: Wheel
  init(engine: any Engine, front: Wheel, back: Wheel) {
    self.engine = engine
    self.front = front
    self.back = back
  }
}

/// Wraps an engine, naming itself around the inner one, to see decorator order.
struct LoggingEngine: Engine {
  let inner: any Engine
  let label: String
  var name: String { "\(label)(\(inner.name))" }
}

struct Boom: Error, CustomStringConvertible {
  var description: String { "the disk is full" }
}

/// A parent and child that point at each other: the child's pointer is set after construction.
final class Parent: Sendable {
  let child: Child
  init(child: Child) { self.child = child }
}

final class Child: Sendable {
  private let storage = Locked<Parent?>(nil)
  var parent: Parent? {
    get { storage.withLock { $0 } }
    set { storage.withLock { $0 = newValue } }
  }
}

/// Extracts the case of an error for `#expect`, or nil when it is not an `InjectionError`.
func injectionError(_ error: (any Error)?) -> InjectionError? { error as? InjectionError }

extension Container {
  /// Registers `Wheel` in `scope` and returns the count of how many times its factory ran.
  func registerCountedWheel(scope: Scope) throws -> Counter {
    let made = Counter()
    try register(Wheel.self, scope: scope) { _ in
      made.increment()
      return Wheel()
    }
    return made
  }
}
