// swift-tools-version:6.1
import PackageDescription

// Its own package, so building or testing Kernel never compiles the benchmarks or their peers.
let package = Package(
  name: "KernelBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Kernel", path: ".."),
    .package(url: "https://github.com/Swinject/Swinject", exact: "2.10.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
  ],
  targets: [
    .executableTarget(
      name: "kernel-bench",
      dependencies: [
        .product(name: "Injection", package: "Kernel"),
        .product(name: "Api", package: "Kernel"),
        .product(name: "SampleApi", package: "Kernel"),
        .product(name: "KernelTesting", package: "Kernel"),
        .product(name: "Layers", package: "Kernel"),
        .product(name: "Store", package: "Kernel"),
        .product(name: "Domain", package: "Kernel"),
        .product(name: "MoviesKit", package: "Kernel"),
        .product(name: "MoviesTesting", package: "Kernel"),
        .product(name: "KernelOpenAPI", package: "Kernel"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "GRDBSQLite", package: "GRDB.swift"),
        .product(name: "Swinject", package: "Swinject"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
