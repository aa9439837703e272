// swift-tools-version:6.1
import PackageDescription

// An app whose api client is generated from an OpenAPI document (openapi.yaml) and sends
// through Kernel: its own package, depending on Kernel by path. The generated code is committed
// (Sources/MoviesOpenAPIKit/Generated); `./generate` makes it again.
let package = Package(
  name: "MoviesOpenAPI",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [
    .package(name: "Kernel", path: "../.."),
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
  ],
  targets: [
    .target(
      name: "MoviesOpenAPIKit",
      dependencies: [
        .product(name: "KernelOpenAPI", package: "Kernel"),
        .product(name: "Composition", package: "Kernel"),
        .product(name: "Domain", package: "Kernel"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ]),
    .executableTarget(
      name: "movies-openapi",
      dependencies: [
        "MoviesOpenAPIKit", .product(name: "KernelCommands", package: "Kernel"),
        .product(name: "KernelServe", package: "Kernel"),
        .product(name: "Composition", package: "Kernel"),
        .product(name: "Domain", package: "Kernel"),
      ]),
    .testTarget(
      name: "MoviesOpenAPITests",
      dependencies: [
        "MoviesOpenAPIKit", "movies-openapi", .product(name: "KernelTesting", package: "Kernel"),
        .product(name: "KernelOpenAPI", package: "Kernel"),
        .product(name: "Composition", package: "Kernel"),
        .product(name: "SampleApi", package: "Kernel"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ]),
  ],
  swiftLanguageModes: [.v6]
)
