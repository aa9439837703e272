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
  private nonisolated(unsafe) var entries: [Key: AnyDefinition] = [:]
  /// Written once, under `lock`, before `frozen` is stored true; read only after `frozen` loads
  /// true (acquiring); never written again.
  @usableFromInline @exclusivity(unchecked) nonisolated(unsafe) var table: FrozenTable?

  deinit { table?.deallocate() }

  var isFrozen: Bool { frozen.load(ordering: .acquiring) }

  /// The entry for `key` once frozen, unretained: valid while this registry lives.
  @inlinable
  func frozenLookup(_ key: Key) -> Unmanaged<AnyDefinition>? {
    frozen.load(ordering: .acquiring) ? table?.lookup(key) : nil
  }

  /// The entry for `key` while registrations may still change (nil once frozen).
  @usableFromInline
  func openLookup(_ key: Key) -> AnyDefinition? {
    lock.withLock { frozen.load(ordering: .relaxed) ? nil : entries[key] }
  }

  func lookup(_ key: Key) -> AnyDefinition? {
    lock.withLock { entries[key] }
  }

  /// Every registration, in no particular order.
  var all: [AnyDefinition] {
    lock.withLock { Array(entries.values) }
  }

  /// Changes the table; throws `containerFrozen` (naming `service`) once frozen.
  func update<R>(
    service: @autoclosure () -> String, _ body: (inout [Key: AnyDefinition]) throws -> R
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
