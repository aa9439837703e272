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

/// The registrations of a bootstrapped container, as an open-addressing hash table of
/// unretained references.
///
/// Frozen means never written again, so the table is read with no lock and no reference
/// counting: the `Registry` that builds it keeps every definition alive and frees the buffer
/// when it goes. Two threads resolving at once thus write no shared memory, not even a
/// reference count. The hash mixes the identities of the key's metatypes with two
/// multiplications (a tag adds an FNV-1a pass over its text): no SipHash on a resolve.
@usableFromInline
struct FrozenTable: @unchecked Sendable {
  /// Safe: the registry keeps every definition alive.
  @usableFromInline let slots: UnsafeMutableBufferPointer<Unmanaged<AnyDefinition>?>
  @usableFromInline let mask: Int

  /// A table holding `definitions`, at most half full so probes stay short. The caller keeps
  /// `definitions` alive and calls `deallocate()` when done.
  init(_ definitions: [AnyDefinition]) {
    var capacity = 8
    while capacity < definitions.count * 2 { capacity *= 2 }
    slots = .allocate(capacity: capacity)
    slots.initialize(repeating: nil)
    mask = capacity - 1
    for definition in definitions {
      var index = definition.key.fastHash & mask
      while slots[index] != nil { index = (index + 1) & mask }
      slots[index] = Unmanaged.passUnretained(definition)
    }
  }

  /// Safe: the registry keeps every definition alive.
  @inlinable
  func lookup(_ key: Key) -> Unmanaged<AnyDefinition>? {
    var index = key.fastHash & mask
    while let candidate = slots[index] {
      if candidate._withUnsafeGuaranteedRef({ $0.key == key }) { return candidate }
      index = (index + 1) & mask
    }
    return nil
  }

  func deallocate() { slots.deallocate() }
}

extension Key {
  /// A cheap, well-spread hash of the key's identities, for `FrozenTable`.
  @inlinable
  var fastHash: Int {
    let type = UInt(bitPattern: ObjectIdentifier(self.type))
    let arguments = UInt(bitPattern: ObjectIdentifier(self.arguments))
    var mixed = type &* 0x9E37_79B9_7F4A_7C15 ^ arguments &* 0xC2B2_AE3D_27D4_EB4F
    if let tag { mixed ^= tag.fastHash &* 0x1656_67B1_9E37_79F9 }
    return Int(bitPattern: mixed ^ (mixed >> 29))
  }
}

extension Tag {
  @inlinable
  var fastHash: UInt {
    switch value {
    case .int(let number):
      return UInt(bitPattern: number)
    case .string(let name):
      var name = name
      return name.withUTF8 { bytes in
        var hash: UInt = 0xcbf2_9ce4_8422_2325
        for byte in bytes { hash = (hash ^ UInt(byte)) &* 0x100_0000_01b3 }
        return hash
      }
    }
  }
}
