/// What the runtime says a type is, read from its metadata's kind (stable ABI).
enum TypeKind {
  /// Whether instances of `type` are values (struct, enum, optional, tuple, function,
  /// metatype), which nothing can hold weakly; false for classes and for existentials, which
  /// may hold a class.
  static func isValue(_ type: any Any.Type) -> Bool {
    let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
    let kind = metadata.load(as: UInt.self)
    // Struct 0x200, enum 0x201, optional 0x202, tuple 0x301, function 0x302, metatype 0x304,
    // existential metatype 0x306. Classes are 0 (or an isa pointer where Objective-C is).
    return [0x200, 0x201, 0x202, 0x301, 0x302, 0x304, 0x306].contains(kind)
  }
}
