import Foundation
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

/// Config files, variables and flags as the built binary sees them.
@Suite(.timeLimit(.minutes(5))) struct ConfigTests {
  static let offlineByDefault = """
    profile: offline
    environments:
      sample:
        baseURL: https://sample.kernel.invalid/api/
        transport: sample
    profiles:
      api:
        movies: [api]
      offline:
        movies: [store]
    """

  @Test func fileThenVariableThenFlag() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try kernel.write(Self.offlineByDefault, to: "Config/kernel.yaml")
    func profile(_ run: Kernel.Run) -> (String?, String?) {
      let settings = run.json?["settings"] as? [[String: String]]
      let entry = settings?.first { $0["key"] == "profile" }
      return (entry?["value"], entry?["source"])
    }
    let file = try await kernel.run(["config", "show", "--format", "json"])
    #expect(profile(file) == ("offline", "Config/kernel.yaml"), "\(file)")
    let variable = try await kernel.run(
      ["config", "show", "--format", "json"], variables: ["KERNEL_PROFILE": "api"])
    #expect(profile(variable) == ("api", "variable KERNEL_PROFILE"))
    let flag = try await kernel.run(
      ["config", "show", "--format", "json", "--profile", "offline"],
      variables: ["KERNEL_PROFILE": "api"])
    #expect(profile(flag) == ("offline", "flag --profile"))

    // And they change what runs: the file's offline profile has nothing cached (69), the
    // variable's api profile answers from the sample api.
    #expect(try await kernel.run(["movies", "get", "1"]).status == 69)
    #expect(
      try await kernel.run(["movies", "get", "1"], variables: ["KERNEL_PROFILE": "api"]).status == 0
    )
    #expect(
      try await kernel.run(
        ["movies", "get", "1", "--profile", "offline"], variables: ["KERNEL_PROFILE": "api"]
      )
      .status == 69)
  }

  /// The built-in config names one stack per service, its reads and writes alike.
  @Test func theBuiltInConfigHasOneStackForTheMoviesReadsAndWrites() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let shown = try await kernel.run(["config", "show", "--format", "json"])
    let keys = (shown.json?["settings"] as? [[String: String]])?.compactMap { $0["key"] } ?? []
    #expect(keys.contains("movies") && !keys.contains("movieWrites"), "\(shown)")
    let movies = (shown.json?["settings"] as? [[String: String]])?.first { $0["key"] == "movies" }
    #expect(movies?["value"]?.contains("outbox") == true, "\(shown)")
  }

  @Test(arguments: [
    (
      "profile: layered\nprofiles:\n  api:\n    movies: [api]\n", [String](),
      "Config/kernel.yaml: profile names \"layered\", which is not one of: api."
    ),
    (
      ConfigTests.offlineByDefault, ["--profile", "nightly"],
      "the command line: --profile names \"nightly\", which is not one of: api, offline."
    ),
    (
      ConfigTests.offlineByDefault, ["--profile", "api", "--environment", "staging"],
      "the command line: --environment names \"staging\", which is not one of: sample."
    ),
    (
      "profile: api\nprofiles:\n  api:\n    movies: [logging, cahce, api]\n", [String](),
      "Config/kernel.yaml: profiles.api.movies[1] names \"cahce\""
    ),
    (
      "profile: api\nprofiles:\n  api:\n    movies: [logging, dedupe]\n", [String](),
      "Config/kernel.yaml: the stack profiles.api.movies [logging, dedupe] must end in a source, api or store."
    ),
    (
      "timeouts:\n  requestSeconds: soon\nprofiles:\n  api:\n    movies: [api]\n", [String](),
      "Config/kernel.yaml:2:19: timeouts.requestSeconds is \"soon\", but it must be a whole number."
    ),
    (
      "profiles:\n  api:\n    movies: [api\n", [String](),
      "Config/kernel.yaml:4:1: the file is not valid YAML"
    ),
    (
      "retires: [backoff]\nprofiles:\n  api:\n    movies: [api]\n", [String](),
      "Config/kernel.yaml:1:1: unknown key retires; did you mean retriers?"
    ),
    (
      "profile: api\nenvironment: prod\nenvironments:\n  prod:\n    baseURL: http://example.com/api/\n"
        + "profiles:\n  api:\n    movies: [api]\n", [String](),
      "Config/kernel.yaml: environments.prod.baseURL is not usable"
    ),
  ])
  func everyConfigErrorExits78NamingFileAndKey(yaml: String, flags: [String], message: String)
    async throws
  {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    try kernel.write(yaml, to: "Config/kernel.yaml")
    let run = try await kernel.run(flags + ["movies", "get", "1"])
    #expect(run.status == 78, "\(run)")
    #expect(run.stderr.hasPrefix(message), "\(run)")
    #expect(run.stderr.split(separator: "\n").count == 1)
    #expect(run.stdout.isEmpty)
  }

  @Test func configAndDataDirComeFromFlagsOrVariablesFromAnyDirectory() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let elsewhere = kernel.home.appendingPathComponent("elsewhere.yaml")
    try Self.offlineByDefault.write(to: elsewhere, atomically: true, encoding: .utf8)
    let shown = try await kernel.run(["config", "show", "--config", elsewhere.path])
    #expect(shown.stdout.contains("config: \(elsewhere.path)"), "\(shown)")
    let variable = try await kernel.run(
      ["config", "show"], variables: ["KERNEL_CONFIG": elsewhere.path])
    #expect(variable.stdout.contains("config: \(elsewhere.path)"))
    let builtIn = try await kernel.run(["config", "show"])
    #expect(builtIn.stdout.contains("config: the built-in config"))

    let data = kernel.home.appendingPathComponent("elsewhere-data")
    #expect(try await kernel.run(["movies", "get", "1", "--data-dir", data.path]).status == 0)
    #expect(
      FileManager.default.fileExists(atPath: data.appendingPathComponent("cache.sqlite").path))
    let missing = try await kernel.run(["config", "show", "--config", "/nonexistent.yaml"])
    #expect(missing.status == 78)
    #expect(missing.stderr.hasPrefix("/nonexistent.yaml: --config cannot be used"))
  }
}

extension ConfigTests {
  @Test func aDataDirInTheFileThatCannotBeUsedExits78NamingTheKey() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let blocker = kernel.home.appendingPathComponent("a-file")
    try "not a folder".write(to: blocker, atomically: true, encoding: .utf8)
    let folder = blocker.appendingPathComponent("kernel").path
    try kernel.write("dataDir: \(folder)\n", to: "Config/kernel.yaml")
    let bare = try await kernel.run(["movies", "top-grossing", "--year", "2016"])
    #expect(bare.status == 78, "\(bare)")
    #expect(
      bare.stderr.hasPrefix(
        "Config/kernel.yaml: profile names \"layered\", but the file defines none; "), "\(bare)")

    try kernel.write(
      "dataDir: \(folder)\nprofile: offline\nprofiles:\n  offline:\n    movies: [store]\n",
      to: "Config/kernel.yaml")
    let run = try await kernel.run(["movies", "top-grossing", "--year", "2016"])
    #expect(run.status == 78, "\(run)")
    #expect(run.stderr.hasPrefix("Config/kernel.yaml: dataDir \(folder)"), "\(run)")
    #expect(run.stderr.split(separator: "\n").count == 1 && run.stdout.isEmpty, "\(run)")
  }

  /// `--data-dir` naming a file, or a link to nothing: each refused with what it is (exit 78),
  /// and the file left as it was.
  @Test func aDataDirThatIsAFileOrALinkToNothingIsRefusedSayingSo() async throws {
    let kernel = try Kernel()
    defer { kernel.cleanUp() }
    let file = kernel.home.appendingPathComponent("a-file")
    try "not a folder".write(to: file, atomically: true, encoding: .utf8)
    let dangling = kernel.home.appendingPathComponent("a-link")
    try FileManager.default.createSymbolicLink(
      atPath: dangling.path, withDestinationPath: kernel.home.appendingPathComponent("gone").path)
    for (path, reason) in [
      (file.path, "it is a file, not a folder"),
      (dangling.path, "it cannot be created (a link to nothing is in its place)"),
    ] {
      let run = try await kernel.run(["movies", "get", "1", "--data-dir", path])
      #expect(run.status == 78, "\(run)")
      #expect(
        run.stderr == "the command line: --data-dir \(path) cannot be used: \(reason).\n",
        "\(run)")
    }
    #expect(try String(contentsOf: file, encoding: .utf8) == "not a folder")
  }
}
