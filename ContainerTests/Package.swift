// swift-tools-version:6.1
import PackageDescription

// The container's tests, a package of their own on Kernel by path: SwiftPM builds every test
// target of a package into one test bundle, so in Kernel's package they would wait for GRDB,
// Yams and the composition. Here they build `Injection` and the core of `KernelTesting` only:
// `swift test --package-path ContainerTests --filter InjectionTests`.
let package = Package(
  name: "ContainerTests",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [
    .package(name: "Kernel", path: "..")
  ],
  targets: [
    .testTarget(
      name: "InjectionTests",
      dependencies: [
        .product(name: "Injection", package: "Kernel"),
        .product(name: "KernelTesting", package: "Kernel"),
      ])
  ]
)
