import Dispatch
import KernelTesting
import Testing

@testable import Injection

@Suite struct ConcurrencyTests {
  @Test func eightTasksResolvingAHundredThousandTimesEachMakeTheSingletonOnce() async throws {
    let container = Container()
    let made = try container.registerCountedWheel(scope: .singleton)
    try container.register(Car.self, scope: .unique) { r in
      Car(engine: PetrolEngine(), front: try r.resolve(), back: try r.resolve())
    }
    try container.bootstrap()

    let identities = try await withThrowingTaskGroup(of: Set<ObjectIdentifier>.self) { group in
      for task in 0..<8 {
        group.addTask {
          var seen = Set<ObjectIdentifier>()
          for index in 0..<100_000 {
            let wheel: Wheel =
              index.isMultiple(of: 8)
              ? try container.resolve(Car.self).front : try container.resolve()
            seen.insert(ObjectIdentifier(wheel))
            if index.isMultiple(of: 1_000) { await Task.yield() }
          }
          _ = task
          return seen
        }
      }
      return try await group.reduce(into: Set<ObjectIdentifier>()) { $0.formUnion($1) }
    }
    #expect(made.value == 1)
    #expect(identities.count == 1)
  }

  /// Runs on threads of its own (not the cooperative pool): the two resolving threads block.
  @Test func aContendedFirstResolveMakesExactlyOneSingleton() async throws {
    try await onThreadOfItsOwn {
      for _ in 0..<5 {
        let made = Counter()
        let arrivals = Counter()
        let bothArrived = DispatchSemaphore(value: 0)
        let container = Container()
        try container.register(Wheel.self, scope: .singleton) { _ in
          made.increment()
          // Keep the making open until the other thread is resolving too, so a container that
          // let both in would run this factory twice. The timeout only bounds a scheduler that
          // runs the threads one after the other; it is waited, not spun.
          _ = bothArrived.wait(timeout: .now() + .milliseconds(500))
          return Wheel()
        }
        try container.bootstrap()
        let seen = Locked<Set<ObjectIdentifier>>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
          if arrivals.increment() == 2 { bothArrived.signal() }
          if let wheel = try? container.resolve(Wheel.self) {
            _ = seen.withLock { $0.insert(ObjectIdentifier(wheel)) }
          }
        }
        #expect(arrivals.value == 2)
        #expect(made.value == 1)
        #expect(seen.withLock { $0.count } == 1)
      }
    }
  }

  @Test func resolvingWhileRegisteringIsSafe() async throws {
    let container = Container()
    try container.register(Wheel.self, scope: .singleton) { _ in Wheel() }
    try await withThrowingTaskGroup(of: Void.self) { group in
      group.addTask {
        for index in 0..<500 {
          try container.register(String.self, tag: Tag(index)) { _ in "\(index)" }
        }
      }
      for _ in 0..<4 {
        group.addTask {
          for _ in 0..<2_000 { _ = try container.resolve(Wheel.self) }
        }
      }
      try await group.waitForAll()
    }
    #expect(try container.resolve(String.self, tag: 499) == "499")
  }

  @Test func singletonsWithPropertyHooksArePublishedComplete() async throws {
    try await onThreadOfItsOwn { try Self.publishComplete() }
  }

  private static func publishComplete() throws {
    for _ in 0..<20 {
      let container = Container()
      try container.register(Parent.self, scope: .singleton) { r in Parent(child: try r.resolve()) }
      try container.register(Child.self, scope: .singleton) { _ in Child() }
        .resolvingProperties { r, child in child.parent = try r.resolve(Parent.self) }
      try container.bootstrap()
      let incomplete = Counter()
      DispatchQueue.concurrentPerform(iterations: 8) { index in
        if index.isMultiple(of: 2) {
          if let child = try? container.resolve(Child.self), child.parent == nil {
            incomplete.increment()
          }
        } else {
          if let parent = try? container.resolve(Parent.self), parent.child.parent == nil {
            incomplete.increment()
          }
        }
      }
      #expect(incomplete.value == 0)
    }
  }
}
