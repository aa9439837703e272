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
