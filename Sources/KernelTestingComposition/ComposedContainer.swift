import Composition
import Foundation
import Injection

/// The real composition of a profile, with parts swapped in a child container: what a test of an
/// app's wiring starts from. Everything not overridden is Kernel's own registration; everything
/// resolved through the child sees the overrides (a `TestClock`, a `RecordingTransport`, a
/// fixed `RandomSource`).
///
/// ```swift
/// let clock = TestClock()
/// let container = try composedContainer(app: .books, profile: "api", dataDirectory: dir.url) { child in
///   try child.register((any Clock<Duration>).self) { _ in clock }
/// }
/// ```
///
/// Without `config`, the app's built-in config (`KernelConfig.builtIn`).
public func composedContainer(
  app: KernelApp, profile: String? = nil, config: KernelConfig? = nil,
  dataDirectory: URL, environment: String? = nil, baseURL: String? = nil,
  overriding: @escaping @Sendable (Container) throws -> Void = { _ in }
) throws -> Container {
  let runtime = Runtime(dataDirectory: dataDirectory, environment: environment, baseURL: baseURL)
  return try app.compose(
    config: try config ?? .builtIn(app), profile: profile, runtime: runtime, overriding: overriding
  ).container
}
