// swift-tools-version:6.1
import PackageDescription

// Modules and the direction of their imports follow ../shared/ARCHITECTURE.md.
// Targets join as their issues land; each one here does real work today.
let package = Package(
  name: "Kernel",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "Injection", targets: ["Injection"]),
    .library(name: "Domain", targets: ["Domain"]),
    .library(name: "Api", targets: ["Api"]),
    .library(name: "SampleApi", targets: ["SampleApi"]),
    .library(name: "Layers", targets: ["Layers"]),
    .library(name: "Store", targets: ["Store"]),
    .library(name: "Composition", targets: ["Composition"]),
    // An app's command line: Kernel's generic commands, global options, exit codes and safe
    // terminal output under the app's name, beside its own commands.
    .library(name: "KernelCommands", targets: ["KernelCommands"]),
    .library(name: "KernelServe", targets: ["KernelServe"]),
    // Test support for Kernel's tests and an app's: test clocks, counters, temporary dirs, a
    // loopback api, a recording transport, a composed container with overrides.
    .library(name: "KernelTesting", targets: ["KernelTesting"]),
    .library(name: "KernelTestingComposition", targets: ["KernelTestingComposition"]),
    // A generated OpenAPI client through Kernel (a `ClientTransport` over the composed client,
    // its operations stacked in the config); its own product, so apps without OpenAPI do not
    // build the runtime.
    .library(name: "KernelOpenAPI", targets: ["KernelOpenAPI"]),
    // The movie example, built on the products above as any app is: its domain, api mapping,
    // calls, assembly, built-in config and sample api; and its test support.
    .library(name: "MoviesKit", targets: ["MoviesKit"]),
    .library(name: "MoviesTesting", targets: ["MoviesTesting"]),
    .executable(name: "kernel", targets: ["kernel"]),
  ],
  dependencies: [
    .package(url: "https://github.com/swhitty/FlyingFox", from: "0.27.1"),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(
      url: "https://github.com/apple/swift-configuration", from: "1.4.0",
      traits: [.defaults, "YAML", "CommandLineArguments"]),
    // Yams directly only for what swift-configuration does not surface: the line and column of
    // a syntax error or of an unknown key.
    .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
    // Child processes in tests (KernelTesting's `ChildProcess`), and the descriptors and paths
    // they take (swift-system: Apple platforms have it as `System`).
    .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    // `swift package generate-documentation`: the DocC catalogs, built in CI.
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
  ],
  targets: [
    // The dependency container: standard library, Foundation and Synchronization only.
    .target(name: "Injection"),
    // What every service shares: values with validators, failures, writes' outcomes, dates.
    .target(name: "Domain"),
    // libcurl's few calls, opened with dlopen when the first request is made (no link-time
    // dependency, no headers needed to build): the Linux transport's engine.
    .target(name: "CCurl"),
    // The system's libyaml (0.2 or later), declared: Composition reads a config's event stream
    // with it to bound aliases, size and depth before Yams builds any node.
    .systemLibrary(
      name: "CLibYAML", pkgConfig: "yaml-0.1",
      providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
    // Environments, routes, the api context, transports, validation, mapping, api services.
    .target(
      name: "Api",
      dependencies: [
        "Domain", "CCurl", .product(name: "HTTPTypes", package: "swift-http-types"),
      ]),
    // Call descriptions (each carrying its api request), the layer stack and the runner over it,
    // logging / dedupe / memory / caching layers, cache policies, the cache-store protocol and its
    // in-memory twin: above Api, so a call carries its own request; no SQLite.
    .target(
      name: "Layers",
      dependencies: ["Domain", "Api", .product(name: "HTTPTypes", package: "swift-http-types")]),
    // The SQLite cache store (GRDB on the system libsqlite3): the only module importing GRDB.
    .target(
      name: "Store",
      dependencies: [
        "Layers", "Domain", .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "GRDBSQLite", package: "GRDB.swift"),
      ]),
    // Reads the config and builds the object graph per profile: the one place naming concrete types.
    .target(
      name: "Composition",
      dependencies: [
        "Injection", "Domain", "Api", "Layers", "Store", "CLibYAML",
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Configuration", package: "swift-configuration"),
        .product(name: "Yams", package: "Yams"),
      ],
      path: "Composition"),
    // The command front any app builds on: the generic commands, parsing, rendering, exit
    // codes. It sees Composition's façade (the profile's services, the api's environments and
    // auth, the cache, serving) and the domain.
    .target(
      name: "KernelCommands",
      dependencies: [
        "Composition", "Domain", "Layers", "Api",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ]),
    // The movie example, a module of its own as an app's would be (Examples/Books is the
    // model): the generic modules name no movie.
    .target(
      name: "MoviesKit",
      dependencies: [
        "Domain", "Api", "Layers", "Composition", "SampleApi",
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ]),
    // Kernel's `serve`, apart from KernelCommands: an app's command line links the server
    // (FlyingSocks) only when it serves.
    .target(
      name: "KernelServe",
      dependencies: [
        "KernelCommands", "SampleApi", "Domain",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    .target(
      name: "MoviesTesting",
      dependencies: [
        "MoviesKit", "Domain", "Api", "Layers", "SampleApi", "KernelTesting",
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ]),
    // `kernel`: the command library and the movie commands.
    .executableTarget(
      name: "kernel",
      dependencies: [
        "KernelCommands", "KernelServe", "Composition", "Domain", "MoviesKit", "SampleApi",
      ]),
    // The bundled static API and its loopback fixture server.
    .target(
      name: "SampleApi",
      dependencies: [
        "Domain", "Api", .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "FlyingSocks", package: "FlyingFox"),
      ]
    ),
    // What tests need, as products an app's tests import too (HummingbirdTesting is the model):
    // the core (clocks, counters, temporary dirs, a recording transport, a loopback api, the
    // built binary), which needs neither the composition nor GRDB nor Yams, so the container's
    // tests build without them; and the real composition with a test's overrides.
    .target(
      name: "KernelTesting",
      dependencies: [
        "Domain", "Api", "Layers", "SampleApi",
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Subprocess", package: "swift-subprocess"),
        .product(
          name: "SystemPackage", package: "swift-system", condition: .when(platforms: [.linux])),
      ]),
    .target(
      name: "KernelOpenAPI",
      dependencies: [
        "Api", "Domain", "Layers",
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
      ]),
    .testTarget(
      name: "KernelOpenAPITests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "KernelOpenAPI", "Api", "Domain", "Layers", "Composition", "SampleApi",
        "KernelTesting", .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
      ]),
    .target(
      name: "KernelTestingComposition",
      dependencies: ["Composition", "Injection"]),
    // The container's tests are a package of their own, ContainerTests/, so they build without
    // GRDB, Yams and the composition; the same files are a target here as well, so this
    // package's one test build runs them too (in `swift test`, and under AddressSanitizer in
    // release, whose build would otherwise be made twice).
    .testTarget(
      name: "InjectionTests", dependencies: ["Injection", "KernelTesting"],
      path: "ContainerTests/Tests/InjectionTests"),
    .testTarget(name: "DomainTests", dependencies: ["Domain"]),
    // zlib and brotli's encoder, for the tests' servers that send coded bodies.
    .systemLibrary(
      name: "CCompression", path: "Tests/CCompression",
      providers: [.apt(["zlib1g-dev", "libbrotli-dev"]), .brew(["zlib", "brotli"])]),
    .testTarget(
      name: "ApiTests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "Api", "SampleApi", "Domain", "KernelTesting", "CCompression",
      ]),
    .testTarget(
      name: "LayersTests",
      dependencies: [
        "MoviesKit", "MoviesTesting", "Layers", "Domain", "Api", "KernelTesting", "SampleApi",
      ]),
    // The policy matrix runs on both cache stores, so it lives here with the SQLite one.
    .testTarget(
      name: "StoreTests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "Store", "Layers", "Domain", "KernelTesting", .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    // Layers over the real API over loopback: what crosses Store and Api without either importing the other.
    .testTarget(
      name: "IntegrationTests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "Store", "Layers", "Api", "SampleApi", "Domain", "Composition", "KernelTesting",
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]),
    .testTarget(
      name: "CompositionTests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "Composition", "Injection", "Domain", "Api", "Layers", "Store", "SampleApi",
        "KernelTesting", "KernelTestingComposition",
        .product(name: "Configuration", package: "swift-configuration"),
      ]),
    // A second app (books) built through public API only: no @testable import here.
    .testTarget(
      name: "OpenCompositionTests",
      dependencies: ["Composition", "Api", "Layers", "SampleApi", "KernelTesting"]),
    .testTarget(
      name: "KernelCommandsTests",
      dependencies: [
        "Domain", "MoviesKit", "MoviesTesting",
        "KernelCommands", "KernelServe", "Composition", "KernelTesting",
      ]),
    .testTarget(
      name: "SampleApiTests",
      dependencies: [
        "MoviesKit", "MoviesTesting", "SampleApi", "Domain", "KernelTesting",
      ]),
    // The built `kernel` binary, run as a process against `kernel serve`.
    // GRDB here only to age, edit and lock the cache file from outside, as another process would.
    .testTarget(
      name: "EndToEndTests",
      dependencies: [
        "MoviesKit", "MoviesTesting",
        "kernel", "SampleApi", "KernelTesting", "Domain",
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      // A user's data folder made by an earlier Kernel (scripts/make-upgrade-fixture).
      exclude: ["Fixtures"]),
  ],
  swiftLanguageModes: [.v6]
)

// CI's AddressSanitizer build (the fuzzing one, below) builds only the test targets it runs,
// named in KERNEL_TEST_TARGETS (comma-separated); unset, as in every other build, all of them.
if let selected = Context.environment["KERNEL_TEST_TARGETS"] {
  let names = Set(selected.split(separator: ",").map(String.init))
  package.targets.removeAll { $0.type == .test && !names.contains($0.name) }
}

// The libFuzzer targets (Fuzz/Sources), declared only for the build that fuzzes (KERNEL_FUZZ
// set, by scripts/fuzz and CI), which also runs AddressSanitizer's tests: one build with
// -sanitize=fuzzer,address serves both.
if Context.environment["KERNEL_FUZZ"] != nil {
  let asLibrary: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
  // libFuzzer's main, linked into the fuzz targets only: the build's coverage (the build's
  // -sanitize-coverage) reaches it through the sanitizer's callbacks.
  let fuzzer: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address"])]
  package.targets += [
    // Hands a target's process to libFuzzer.
    .target(name: "FuzzDriver", path: "Fuzz/Sources/FuzzDriver"),
    // Any bytes as an api body: the movie decoders, key paths and envelopes.
    .executableTarget(
      name: "fuzz-mapping", dependencies: ["FuzzDriver", "Api", "Domain", "MoviesKit"],
      path: "Fuzz/Sources/fuzz-mapping", swiftSettings: asLibrary, linkerSettings: fuzzer),
    // Any bytes as Config/kernel.yaml: parsing, the schema, resolving and composing each profile.
    .executableTarget(
      name: "fuzz-config", dependencies: ["FuzzDriver", "Composition", "MoviesKit"],
      path: "Fuzz/Sources/fuzz-config", swiftSettings: asLibrary, linkerSettings: fuzzer),
    // Any argument vector to the built kernel: an exit code of the contract, never a crash.
    .executableTarget(
      name: "fuzz-cli", dependencies: ["FuzzDriver"], path: "Fuzz/Sources/fuzz-cli",
      swiftSettings: asLibrary, linkerSettings: fuzzer),
  ]
  package.products += ["fuzz-mapping", "fuzz-config", "fuzz-cli"].map {
    .executable(name: $0, targets: [$0])
  }
}
