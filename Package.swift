// swift-tools-version:6.1
import PackageDescription

// Modules and the direction of their imports follow ../shared/ARCHITECTURE.md.
// Targets join as their issues land; each one here does real work today.
let package = Package(
  name: "Kernel",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "Injection", targets: ["Injection"])
  ],
  targets: [
    // The dependency container: standard library, Foundation and Synchronization only.
    .target(name: "Injection"),
    .testTarget(name: "InjectionTests", dependencies: ["Injection"]),
  ],
  swiftLanguageModes: [.v6]
)
