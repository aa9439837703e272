// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets, their own package so the rest never builds with the fuzzing sanitizer.
// Build and run them with scripts/fuzz (it passes -sanitize=fuzzer,address).
let package = Package(
  name: "KernelFuzz",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Kernel", path: "..")],
  targets: [
    // Hands a target's process to libFuzzer.
    .target(name: "FuzzDriver"),
    // Any bytes as an api body: the movie decoders, key paths and envelopes.
    .executableTarget(
      name: "fuzz-mapping",
      dependencies: [
        "FuzzDriver", .product(name: "Api", package: "Kernel"),
        .product(name: "Domain", package: "Kernel"), .product(name: "MoviesKit", package: "Kernel"),
      ],
      swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    // Any bytes as Config/kernel.yaml: parsing, the schema, resolving and composing each profile.
    .executableTarget(
      name: "fuzz-config",
      dependencies: [
        "FuzzDriver", .product(name: "Composition", package: "Kernel"),
        .product(name: "MoviesKit", package: "Kernel"),
      ],
      swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
    // Any argument vector to the built kernel: an exit code of the contract, never a crash.
    .executableTarget(
      name: "fuzz-cli", dependencies: ["FuzzDriver"],
      swiftSettings: [.unsafeFlags(["-parse-as-library"])]),
  ],
  swiftLanguageModes: [.v6]
)
