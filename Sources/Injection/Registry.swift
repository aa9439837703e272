import Foundation
import Synchronization

/// The registrations of one container.
///
/// Until `freeze()` every access takes the lock. Freezing builds a `FrozenTable` and publishes
/// it with release ordering; nothing writes it again, so a resolve after `bootstrap()` reads it
/// after one acquiring load, with no lock.
@usableFromInline
final class Registry: @unchecked Sendable {
  /// A pthread mutex, which ThreadSanitizer sees (see `Locked`).
  private let lock = NSLock()
  @usableFromInline let frozen = Atomic<Bool>(false)
  /// Guarded by `lock`; never written once `frozen` is true. Keeps `table`'s entries alive.
  /// Safe: written under `lock`, and only before freezing.
  private nonisolated(unsafe) var entries = Entries()
  /// Written once, under `lock`, before `frozen` is stored true; read only after `frozen` loads
  /// true (acquiring); never written again.
  /// Safe: written once, before `frozen` is released.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var table: FrozenTable?

  deinit { table?.deallocate() }

  /// The entry for `key` once frozen, unretained: safe, as the registry keeps every definition
  /// alive for as long as it lives.
  @inlinable
  func frozenLookup(_ key: Key) -> Unmanaged<AnyDefinition>? {
    frozen.load(ordering: .acquiring) ? table?.lookup(key) : nil
  }

  /// The entry for `key` while registrations may still change (nil once frozen).
  @usableFromInline
  func openLookup(_ key: Key) -> AnyDefinition? {
    // Once frozen, the table answered: no lock is taken to say so again.
    if frozen.load(ordering: .acquiring) { return nil }
    return lock.withLock { frozen.load(ordering: .relaxed) ? nil : entries[key] }
  }

  func lookup(_ key: Key) -> AnyDefinition? {
    // Once frozen, the table holds what `entries` does, and reading it takes no lock.
    if frozen.load(ordering: .acquiring) { return table?.lookup(key)?.takeUnretainedValue() }
    return lock.withLock { entries[key] }
  }

  /// Every registration, in no particular order.
  var all: [AnyDefinition] {
    lock.withLock { Array(entries.values) }
  }

  /// The keys of every registration serving `type` without runtime arguments, under any tag or
  /// none, in the order they were first registered.
  func keys(serving type: any Any.Type) -> [Key] {
    lock.withLock {
      entries.values.lazy.map(\.key).filter {
        ObjectIdentifier($0.type) == ObjectIdentifier(type)
          && ObjectIdentifier($0.arguments) == ObjectIdentifier(Void.self)
      }
      .sorted { entries.order[$0, default: 0] < entries.order[$1, default: 0] }
    }
  }

  /// Changes the table; throws `containerFrozen` (naming `service`) once frozen.
  func update<R>(
    service: @autoclosure () -> String, _ body: (inout Entries) throws -> R
  )
    throws -> R
  {
    try lock.withLock { () throws -> R in
      if frozen.load(ordering: .relaxed) {
        throw InjectionError.containerFrozen(service: service())
      }
      return try body(&entries)
    }
  }

  /// Closes the table for registration; returns what it holds.
  func freeze() -> [AnyDefinition] {
    lock.withLock {
      let definitions = Array(entries.values)
      if !frozen.load(ordering: .relaxed) {
        table = FrozenTable(definitions)
        frozen.store(true, ordering: .releasing)
      }
      return definitions
    }
  }
}

/// A registry's registrations by key, with the order each key was first registered in (a
/// later registration under the same key replaces the earlier one and keeps its place).
struct Entries {
  private var definitions: [Key: AnyDefinition] = [:]
  private(set) var order: [Key: Int] = [:]
  private var next = 0

  subscript(key: Key) -> AnyDefinition? {
    get { definitions[key] }
    set {
      guard let newValue else { return }
      if definitions.updateValue(newValue, forKey: key) == nil {
        order[key] = next
        next += 1
      }
    }
  }

  var values: Dictionary<Key, AnyDefinition>.Values { definitions.values }
}
