/// A resolve's runtime arguments, passed down without their types: a pointer to the tuple
/// `(repeat each A)` the caller holds. It is safe because it is only ever borrowed, from
/// `withUnsafePointer` for the length of one synchronous resolve (never stored or escaped), and
/// only read back as the tuple type recorded in the `Key` it was resolved under: a definition is
/// found by that key, so its factory's argument type is the caller's. Exercised in release under
/// AddressSanitizer by `InjectionTests` (CI).
@usableFromInline typealias Arguments = UnsafeRawPointer
