// swift-tools-version:6.1
import PackageDescription

// An app on Kernel that is not about movies: its own package, depending on Kernel by path.
let package = Package(
  name: "Books",
  platforms: [.macOS(.v15), .iOS(.v18)],
  dependencies: [.package(name: "Kernel", path: "../..")],
  targets: [
    .target(
      name: "BooksKit",
      dependencies: [
        .product(name: "Composition", package: "Kernel"), .product(name: "Api", package: "Kernel"),
        .product(name: "Domain", package: "Kernel"), .product(name: "Layers", package: "Kernel"),
      ]),
    .executableTarget(
      name: "books",
      dependencies: [
        "BooksKit", .product(name: "KernelCommands", package: "Kernel"),
        .product(name: "KernelServe", package: "Kernel"),
      ]),
    .testTarget(
      name: "BooksTests",
      dependencies: [
        "BooksKit", "books", .product(name: "KernelTesting", package: "Kernel"),
        .product(name: "KernelTestingComposition", package: "Kernel"),
        .product(name: "Composition", package: "Kernel"), .product(name: "Api", package: "Kernel"),
        .product(name: "Layers", package: "Kernel"), .product(name: "Injection", package: "Kernel"),
      ]),
  ],
  swiftLanguageModes: [.v6]
)
