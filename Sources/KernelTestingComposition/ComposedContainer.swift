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
/// let container = try composedContainer(profile: "api", dataDirectory: dir.url) { child in
///   try child.register((any Clock<Duration>).self) { _ in clock }
/// }
/// ```
///
/// An app passes itself and its config: `composedContainer(app: .books, config: config, …)`.
public func composedContainer(
  app: KernelApp = .kernel, profile: String? = nil, config: KernelConfig? = nil,
  dataDirectory: URL, environment: String? = nil, baseURL: String? = nil,
  overriding: @escaping @Sendable (Container) throws -> Void = { _ in }
) throws -> Container {
  let runtime = Runtime(dataDirectory: dataDirectory, environment: environment, baseURL: baseURL)
  return try app.compose(
    config: try config ?? .builtIn(), profile: profile, runtime: runtime, overriding: overriding
  ).container
}
