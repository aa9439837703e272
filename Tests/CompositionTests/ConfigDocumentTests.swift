import Composition
import Configuration
import Domain
import Foundation
import MoviesKit
import MoviesTesting
import Testing

/// Reading `Config/kernel.yaml`: precedence, sources, and an error that names file, line and key
/// for every way a file can be wrong.
@Suite struct ConfigDocumentTests {
  static let repository = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

  static var shippedYAML: String {
    get throws {
      try String(
        contentsOf: repository.appendingPathComponent("Config/kernel.yaml"), encoding: .utf8)
    }
  }

  @Test func theBuiltInCopyIsTheShippedFile() throws {
    let shipped = try ConfigDocument(
      text: try Self.shippedYAML, file: "Config/kernel.yaml", app: .kernel
    )
    .resolve()
    let builtIn = try KernelConfig.builtIn(.kernel)
    // Same values everywhere; only the file's name differs. Run scripts/embed-config if not.
    #expect(shipped.settings.map(\.value) == builtIn.settings.map(\.value))
    #expect(shipped.profiles == builtIn.profiles)
    #expect(shipped.environments == builtIn.environments)
    #expect(builtIn.profile == "layered" && builtIn.environment == "sample")
    #expect(
      builtIn.environments["production"]?.baseURL
        == "https://danielsaidi.com/demo_Alamofire_AlamofireObjectMapper_Realm/api/")
    #expect(builtIn.environments["local"]?.baseURL == "http://127.0.0.1:8080/api/")
    #expect(builtIn.profiles["layered"]?.stacks["movies"]?.entries.last == "api")
    #expect(builtIn.profiles["offline"]?.stacks["movies"]?.entries == ["outbox", "store"])
    // One stack per service for its reads and writes: no second stack for the writes.
    #expect(builtIn.profiles["layered"]?.stacks["movies"]?.entries.contains("outbox") == true)
    #expect(builtIn.profiles.values.allSatisfy { Set($0.stacks.keys) == ["movies"] })
  }

  static let small = """
    profile: layered
    environment: sample
    context: persistent
    retry:
      maxRetries: 2
    environments:
      sample:
        baseURL: https://sample.kernel.invalid/api/
      local:
        baseURL: http://127.0.0.1:8080/api/
    profiles:
      api:
        movies: [api]
        context: memory
        retry:
          maxRetries: 4
      layered:
        movies: [cache(networkFirst), api]
    """

  @Test func flagBeatsVariableBeatsProfileBeatsFile() throws {
    func resolved(variables: [String: String] = [:], flags: [String: String] = [:]) throws
      -> KernelConfig
    {
      try ConfigDocument(
        text: Self.small, file: "k.yaml", variables: variables, flags: flags, app: .kernel
      )
      .resolve()
    }
    let file = try resolved()
    #expect(file.profile == "layered" && file.context == "persistent" && file.retry.maxRetries == 2)
    #expect(file.settings.first { $0.key == "retry.maxRetries" }?.source == .file("k.yaml"))

    let profile = try resolved(variables: ["KERNEL_PROFILE": "api"])
    #expect(profile.profile == "api" && profile.context == "memory")
    #expect(profile.retry.maxRetries == 4)
    #expect(
      profile.settings.first { $0.key == "retry.maxRetries" }?.source
        == .profile("api", file: "k.yaml"))
    #expect(profile.settings.first { $0.key == "profile" }?.source == .variable("KERNEL_PROFILE"))

    let variable = try resolved(
      variables: ["KERNEL_PROFILE": "api", "KERNEL_RETRY_MAX_RETRIES": "7"])
    #expect(variable.retry.maxRetries == 7)

    // An empty variable is as if unset (`export KERNEL_PROFILE=`), never a value to refuse.
    let empty = try resolved(
      variables: ["KERNEL_PROFILE": "", "KERNEL_RETRY_MAX_RETRIES": "", "KERNEL_MOVIES": ""])
    #expect(empty.profile == "layered" && empty.retry.maxRetries == 2)
    #expect(empty.settings.first { $0.key == "profile" }?.source == .file("k.yaml"))

    let flag = try resolved(
      variables: ["KERNEL_PROFILE": "api", "KERNEL_ENVIRONMENT": "local"],
      flags: ["profile": "layered", "environment": "sample"])
    #expect(flag.profile == "layered" && flag.context == "persistent")
    #expect(flag.environment == "sample")
    #expect(flag.settings.first { $0.key == "environment" }?.source == .flag("--environment"))
    #expect(flag.settings.first { $0.key == "timeouts.requestSeconds" }?.source == .builtInDefault)
  }

  @Test(arguments: [
    (
      "profile: layered\nretires: [backoff]\nprofiles:\n  layered:\n    movies: [api]\n",
      "k.yaml:2:1: unknown key retires; did you mean retriers?"
    ),
    (
      "profiles:\n  layered:\n    movies: [api]\n    timeouts:\n      requestSecond: 3\n",
      "k.yaml:5:7: unknown key profiles.layered.timeouts.requestSecond; did you mean requestSeconds?"
    ),
    (
      "profile: layered\nprofiles:\n  layered:\n    movies: [api\n",
      "k.yaml:5:1: the file is not valid YAML: did not find expected ',' or ']' while parsing a flow sequence."
    ),
    (
      "profile: [a, b]\nprofiles:\n  layered:\n    movies: [api]\n",
      "k.yaml:1:10: profile is \"a list\", but it must be a text value."
    ),
    // A key written twice is said where it is written again, in a section or a flow mapping.
    (
      "profiles:\n  layered:\n    movies: [api]\n  offline: {}\n  layered:\n    movies: []\n",
      "k.yaml:5:3: the file is not valid YAML: the key layered appears twice (first at 2:3)."
    ),
    (
      "profiles:\n  layered: {movies: [api], \"movies\": [store]}\n",
      "k.yaml:2:28: the file is not valid YAML: the key movies appears twice (first at 2:13)."
    ),
    (
      "retry:\n  maxRetries: many\nprofiles:\n  layered:\n    movies: [api]\n",
      "k.yaml:2:15: retry.maxRetries is \"many\", but it must be a whole number."
    ),
    (
      "profiles:\n  layered:\n    movies: api\n",
      "k.yaml:3:13: profiles.layered.movies is \"api\", but it must be a list such as [a, b]."
    ),
    (
      "profile: nightly\nprofiles:\n  layered:\n    movies: [api]\n",
      "k.yaml: profile names \"nightly\", which is not one of: layered."
    ),
    (
      "profiles:\n  layered:\n    context: disk\n    movies: [api]\n",
      "k.yaml: profiles.layered.context names \"disk\", which is not one of: memory, persistent."
    ),
  ])
  func everyFileErrorNamesFileLineAndKey(yaml: String, message: String) throws {
    let error = #expect(throws: ConfigError.self) {
      try ConfigDocument(text: yaml, file: "k.yaml", app: .kernel).resolve()
    }
    #expect(error?.description == message)
    #expect(error.map { ServiceFailure.of($0) } == .configuration)
  }

  /// The inputs fuzz-config found (Fuzz/Regressions/config), e.g. a file that is one scalar
  /// full of carriage returns, which made a message of many lines: each now fails in one line.
  @Test func fuzzRegressionsFailInOneLine() throws {
    let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("Fuzz/Regressions/config")
    let files = try FileManager.default.contentsOfDirectory(
      at: folder, includingPropertiesForKeys: nil)
    #expect(!files.isEmpty)
    for file in files {
      let text = String(decoding: try Data(contentsOf: file), as: UTF8.self)
      let error = #expect(throws: ConfigError.self) {
        try ConfigDocument(text: text, file: "k.yaml", app: .kernel).resolve()
      }
      let message = error?.description ?? ""
      #expect(message.hasPrefix("k.yaml"), "\(file.lastPathComponent): \(message)")
      #expect(!message.contains("\r") && !message.contains("\n"), "\(message)")
      #expect(message.count < 300, "\(message)")
    }
  }

  @Test func aVariableOfTheWrongTypeNamesTheVariable() throws {
    let document = try ConfigDocument(
      text: Self.small, file: "k.yaml", variables: ["KERNEL_TIMEOUTS_REQUEST_SECONDS": "soon"],
      app: .kernel)
    let error = #expect(throws: ConfigError.self) { try document.resolve() }
    #expect(
      error?.description
        == "the environment: KERNEL_TIMEOUTS_REQUEST_SECONDS is \"soon\", but it must be a whole number."
    )
  }

  @Test func anUnknownProfileFromAFlagNamesTheFlag() throws {
    let document = try ConfigDocument(
      text: Self.small, file: "k.yaml", flags: ["profile": "x"], app: .kernel)
    let error = #expect(throws: ConfigError.self) { try document.resolve() }
    #expect(
      error?.description
        == "the command line: --profile names \"x\", which is not one of: api, layered.")
  }

  /// A flag's value is taken as given: only a list key's is split on commas.
  @Test func aFlagsValueWithACommaIsTakenAsGiven() throws {
    let config = try ConfigDocument(
      text: Self.small, file: "k.yaml",
      flags: [
        "environments.local.password": "pa,ss",
        "environments.local.auth": "oauth2(grant: password, clientId: x)",
        "adapters": "defaultHeaders, defaultHeaders",
      ], app: .kernel
    ).resolve()
    let shown = Dictionary(uniqueKeysWithValues: config.settings.map { ($0.key, $0) })
    #expect(shown["environments.local.password"]?.value == "REDACTED")
    #expect(shown["environments.local.password"]?.source == .flag("--environments-local-password"))
    #expect(shown["environments.local.auth"]?.value == "oauth2(grant: password, clientId: x)")
    #expect(shown["adapters"]?.value == "[defaultHeaders, defaultHeaders]")
  }

  @Test func aPasswordInABaseURLIsRedactedInSettings() throws {
    let config = try ConfigDocument(
      text: Self.small, file: "k.yaml",
      flags: ["baseURL": "https://me:hunter2@example.com/api/"], app: .kernel
    ).resolve()
    let shown = config.settings.first { $0.key == "baseURL" }
    // The user name is redacted too: it can be a token (`https://ghp_x@host/`).
    #expect(shown?.value == "https://REDACTED@example.com/api/")
    #expect(config.baseURL == "https://me:hunter2@example.com/api/")
  }

  @Test func aFileThatCannotBeReadIsAConfigError() throws {
    let error = #expect(throws: ConfigError.self) {
      try ConfigDocument.load(
        path: "/nonexistent/kernel.yaml", workingDirectory: URL(fileURLWithPath: "/"), app: .kernel)
    }
    #expect(
      error?.description.hasPrefix("/nonexistent/kernel.yaml: --config cannot be used") == true)
  }

  /// `ConfigFlag` names each key of the table as swift-configuration's command-line provider
  /// reads it, so a flag `--help` lists is the flag the reader hears.
  @Test func everyKeyOfTheTableIsReadFromTheFlagConfigFlagNames() throws {
    for setting in KernelApp.kernel.catalog.table {
      let key =
        setting.scope == .environment
        ? ["environments", "local", setting.name]
        : setting.name.split(separator: ".").map(String.init)
      let provider = CommandLineArgumentsProvider(
        arguments: ["kernel", ConfigFlag.name(key), "7"])
      let found = try provider.value(forKey: AbsoluteConfigKey(key), type: .string)
      #expect(found.value?.content == .string("7"), "\(setting.id)")
    }
  }

  /// A key's words split where a lower-case letter meets a capital, ASCII or not, and the
  /// variable and the flag say the same words.
  @Test func aKeysWordsSplitAtEachCapitalAfterALowerCaseLetter() throws {
    #expect(ConfigFlag.name(["timeouts", "callSeconds"]) == "--timeouts-call-seconds")
    #expect(
      ConfigFlag.name(["environments", "staging", "baseURL"]) == "--environments-staging-base-url")
    #expect(ConfigFlag.name(["dédiéÉquipe"]) == "--dédié-équipe")
    #expect(ConfigFlag.variable(["dédiéÉquipe", "x2Go"], prefix: "APP") == "APP_DÉDIÉ_ÉQUIPE_X2GO")
    #expect(ConfigFlag.name(["HTTPProxy", "a1B"]) == "--httpproxy-a1b")
    let provider = CommandLineArgumentsProvider(
      arguments: ["app", ConfigFlag.name(["dédiéÉquipe"]), "7"])
    let found = try provider.value(forKey: AbsoluteConfigKey(["dédiéÉquipe"]), type: .string)
    #expect(found.value?.content == .string("7"))
  }

  /// *Configuration*'s reference is the settings table, rendered.
  @Test func theReadmesConfigReferenceIsTheTable() throws {
    let readme = try String(
      contentsOf: Self.repository.appendingPathComponent(
        "Composition/Composition.docc/Configuration.md"), encoding: .utf8)
    let start = try #require(readme.range(of: "<!-- config-reference -->\n"))
    let end = try #require(readme.range(of: "\n<!-- end config-reference -->"))
    let table = String(readme[start.upperBound..<end.lowerBound])
    let rendered = ConfigReference.markdown(for: .kernel)
    #expect(
      table == rendered,
      "run `kernel config reference` and paste it in Composition/Composition.docc/Configuration.md")
  }
}
