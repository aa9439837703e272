import Composition
import Foundation
import KernelCommands
import KernelServe
import KernelTesting
import MoviesKit
import MoviesTesting
import Testing

/// Kernel's generic commands parsed and run in this process, as swift-argument-parser's own
/// tests run theirs: each run writes to a captured output, reads its own variables and working
/// directory, and returns its exit code. What needs a process (signals, pipes, the binary's
/// start-up) stays in `EndToEndTests`.
@Suite(.timeLimit(.minutes(1))) final class InProcessCommandTests {
  let home: TemporaryDirectory

  init() throws { home = try TemporaryDirectory() }
  deinit { home.remove() }

  private var data: URL { home.url.appendingPathComponent("data") }

  struct Ran {
    let code: Int32
    let output: String
    let errors: String
    /// The output's one JSON object.
    func json() throws -> [String: Any] {
      let object = try JSONSerialization.jsonObject(with: Data(output.utf8))
      return try #require(object as? [String: Any])
    }
  }

  /// `kernel <arguments>` with a private home and data dir, in a folder with no config file.
  private func kernel(
    _ arguments: String..., variables: [String: String] = [:], output: Output? = nil
  ) async -> Ran {
    let captured = CapturedOutput()
    let line = CommandLineApp(KernelApp.kernel, abstract: "Kernel, in a test.").serving()
    let code = await line.run(
      arguments, output: output ?? captured.output(),
      variables: ["HOME": home.url.path, "KERNEL_DATA_DIR": data.path].merging(variables) {
        $1
      }, workingDirectory: home.url)
    return Ran(code: code, output: captured.standardOutput, errors: captured.standardError)
  }

  // MARK: config show

  @Test func configShowNamesEachValuesSource() async throws {
    let ran = await kernel("config", "show", "--profile", "offline")
    #expect(ran.code == 0)
    #expect(ran.output.hasPrefix("config: the built-in config\n"))
    let profile = try #require(ran.output.split(separator: "\n").first { $0.hasPrefix("profile ") })
    #expect(profile.contains("offline") && profile.hasSuffix("(flag --profile)"))
    #expect(ran.output.contains("(variable KERNEL_DATA_DIR)"))
  }

  @Test func configShowAsJSONListsEverySetting() async throws {
    let ran = await kernel("config", "show", "--format", "json")
    #expect(ran.code == 0)
    let json = try ran.json()
    #expect(json["file"] as? String == "the built-in config")
    #expect(json["dataDir"] as? String == data.path)
    let settings = try #require(json["settings"] as? [[String: String]])
    #expect(settings.contains { $0["key"] == "profile" && $0["value"] == "layered" })
  }

  @Test func aFormatTheCommandDoesNotPrintIsAUsageError() async {
    let ran = await kernel("config", "show", "--format", "dot")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("--format dot is not a format of this command"))
    #expect(ran.output.isEmpty)
  }

  // MARK: graph and doctor

  @Test func graphDrawsTheProfilesServices() async {
    let ran = await kernel("graph", "--profile", "layered")
    #expect(ran.code == 0)
    #expect(ran.output.contains("ServiceStack tagged \"movies\" [session]"))
    #expect(ran.output.contains("Transport"))
  }

  @Test func graphOfTheOfflineProfileHasNoTransport() async {
    let ran = await kernel("graph", "--profile", "offline", "--format", "mermaid")
    #expect(ran.code == 0)
    #expect(ran.output.contains("ServiceStack"))
    #expect(!ran.output.contains("Transport"))
  }

  @Test func doctorChecksEveryProfileAndCreatesNothing() async {
    let ran = await kernel("doctor")
    #expect(ran.code == 0)
    for check in ["config", "data dir", "profile api", "profile layered", "profile offline"] {
      #expect(ran.output.contains("ok    \(check): "), "\(check)")
    }
    #expect(!FileManager.default.fileExists(atPath: data.path))
  }

  @Test func doctorReportsABadConfigFileWithItsCode() async throws {
    let file = home.url.appendingPathComponent("bad.yaml")
    try Data("profile: [".utf8).write(to: file)
    let ran = await kernel("doctor", "--config", file.path)
    #expect(ran.code == 78)
    #expect(ran.errors.hasPrefix("\(file.path):2:1: the file is not valid YAML"))
  }

  // MARK: env

  @Test func envListMarksTheEnvironmentInUse() async {
    let ran = await kernel("env", "list")
    #expect(ran.code == 0)
    let lines = ran.output.split(separator: "\n").map(String.init)
    #expect(lines.contains { $0.hasPrefix("* sample ") && $0.hasSuffix("(answered in process)") })
    #expect(
      lines.contains { $0.hasPrefix("  local ") && $0.contains("http://127.0.0.1:8080/api/") })
  }

  @Test func envUseIsSavedForTheNextRun() async throws {
    let used = await kernel("env", "use", "local")
    #expect(used.code == 0)
    #expect(used.output.hasPrefix("Now using local (http://127.0.0.1:8080/api/), saved"))
    let listed = try await kernel("env", "list", "--format", "json").json()
    #expect(listed["current"] as? String == "local")
  }

  @Test func envUseOfAnUnknownNameListsTheValidOnes() async {
    let ran = await kernel("env", "use", "qa")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("There is no environment \"qa\""))
    #expect(ran.errors.contains("local, production, sample"))
  }

  @Test func anUnknownEnvironmentIsBlamedOnTheFlagOrTheVariableThatNamedIt() async {
    let flag = await kernel("env", "list", "--environment", "qa")
    #expect(flag.code == 78)
    #expect(
      flag.errors
        == "the command line: --environment names \"qa\", which is not one of: local, production, sample.\n"
    )
    let variable = await kernel("env", "list", variables: ["KERNEL_ENVIRONMENT": "qa"])
    #expect(variable.code == 78)
    #expect(
      variable.errors
        == "the environment: KERNEL_ENVIRONMENT names \"qa\", which is not one of: local, production, sample.\n"
    )
  }

  // MARK: every key a flag

  @Test func everyKeyIsAFlagBeforeOrAfterTheCommandAndConfigShowSaysSo() async {
    let before = await kernel("--timeouts-call-seconds", "7", "config", "show")
    #expect(before.code == 0)
    let line = before.output.split(separator: "\n").first { $0.hasPrefix("timeouts.callSeconds ") }
    #expect(line?.contains(" 7 ") == true)
    #expect(line?.hasSuffix("(flag --timeouts-call-seconds)") == true)
    let after = await kernel(
      "config", "show", "--retry-max-retries=3", "--environments-local-base-url",
      "http://127.0.0.1:9/x/", variables: ["KERNEL_RETRY_MAX_RETRIES": "1"])
    #expect(after.code == 0)
    #expect(after.output.contains("(flag --retry-max-retries)"))
    #expect(after.output.contains("http://127.0.0.1:9/x/"))
    #expect(after.output.contains("(flag --environments-local-base-url)"))
    // A service's stack is a key too, split on commas like its variable.
    let stack = await kernel("config", "show", "--movies", "logging,store")
    let movies = stack.output.split(separator: "\n").first { $0.hasPrefix("movies ") }
    #expect(
      movies?.contains("[logging, store]") == true && movies?.hasSuffix("(flag --movies)") == true)
  }

  @Test func aFlagsValueIsCheckedLikeTheFilesAndBlamedOnTheFlag() async {
    let ran = await kernel("config", "show", "--timeouts-call-seconds", "0")
    #expect(ran.code == 78)
    #expect(
      ran.errors
        == "the command line: --timeouts-call-seconds is \"0\", but it must be a whole number from 1 to 3600.\n"
    )
    let variable = await kernel(
      "config", "show", variables: ["KERNEL_RETRY_MAX_RETRIES": "many"])
    #expect(variable.code == 78)
    #expect(
      variable.errors
        == "the environment: KERNEL_RETRY_MAX_RETRIES is \"many\", but it must be a whole number.\n"
    )
  }

  @Test func helpSaysEveryKeyIsAFlag() async {
    let ran = await kernel("--help")
    #expect(ran.output.contains("Every config key is a flag too"))
    #expect(ran.output.contains("--timeouts-call-seconds"))
  }

  // MARK: auth

  @Test func authStatusLoginAndLogoutKeepNoTokenInTheOutput() async throws {
    let before = await kernel("auth", "status")
    #expect(before.code == 0)
    #expect(before.output.contains("Not logged in"))

    let login = await kernel("auth", "login")
    #expect(login.code == 0)
    #expect(login.output.hasPrefix("Logged in to sample; the credential is saved in "))
    let context = data.appendingPathComponent("context.json")
    let mode = try FileManager.default.attributesOfItem(atPath: context.path)[.posixPermissions]
    #expect((mode as? NSNumber)?.intValue == 0o600)

    let status = try await kernel("auth", "status", "--format", "json").json()
    #expect(status["loggedIn"] as? Bool == true)

    let logout = await kernel("auth", "logout")
    #expect(logout.code == 0)
    #expect(logout.output == "Logged out of sample.\n")
    let after = try await kernel("auth", "status", "--format", "json").json()
    #expect(after["loggedIn"] as? Bool == false)
    let again = await kernel("auth", "logout")
    #expect(again.code == 0)
    #expect(again.output == "Not logged in to sample; there was no credential to forget.\n")
  }

  @Test func aMemoryContextKeepsTheTokenForOneRunOnly() async {
    let ran = await kernel("auth", "login", variables: ["KERNEL_CONTEXT": "memory"])
    #expect(ran.code == 0)
    #expect(ran.output.contains("the credential is kept for this run only (context: memory)"))
    #expect(
      !FileManager.default.fileExists(atPath: data.appendingPathComponent("context.json").path))
  }

  // MARK: cache

  @Test func cacheStatsOfANewDataDirCreatesNoFile() async throws {
    let ran = try await kernel("cache", "stats", "--format", "json").json()
    #expect(ran["entries"] as? Int == 0)
    #expect(
      !FileManager.default.fileExists(atPath: data.appendingPathComponent("cache.sqlite").path))
  }

  @Test func cacheClearSaysHowManyAnswersWentAway() async {
    let ran = await kernel("cache", "clear")
    #expect(ran.code == 0)
    #expect(ran.output == "Cleared the cache: 0 answers removed.\n")
  }

  @Test func aProfileWithoutACacheHasNoCacheStats() async {
    let ran = await kernel("cache", "stats", "--profile", "api")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("The api profile keeps no cache"))
  }

  // MARK: serve's checks (nothing is started)

  @Test func serveRefusesAnAddressThatIsNotLoopback() async {
    let ran = await kernel("serve", "--host", "0.0.0.0")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("0.0.0.0"))
  }

  @Test func serveRefusesAPortOutOfRange() async {
    let ran = await kernel("serve", "--port", "70000")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("70000"))
  }

  @Test func serveRefusesAFailRateOutOfRange() async {
    let ran = await kernel("serve", "--fail-rate", "1.5")
    #expect(ran.code == 64)
    #expect(ran.errors.contains("1.5"))
  }

  @Test func serveWithoutASampleApiOrFixturesSaysWhatToGive() async {
    // This line's app serves no sample api (`serving(fixtures:)`), and the folder has no
    // fixtures.
    let ran = await kernel("serve", "--port", "0")
    #expect(ran.code == 64)
    #expect(
      ran.errors.contains(
        "kernel has no sample API to serve: give --fixtures DIR, a folder of JSON files."))
    #expect(ran.output.isEmpty)
  }

  // MARK: the command line itself

  @Test func helpListsTheGenericCommandsAndTheExitCodes() async {
    let ran = await kernel("--help")
    #expect(ran.code == 0)
    for command in ["auth", "env", "config", "graph", "doctor", "serve", "cache"] {
      #expect(ran.output.contains("  \(command)"), "\(command)")
    }
    #expect(ran.output.contains("Exit codes: 0 ok, 64 usage"))
  }

  /// A group named alone runs the subcommand that only reads (`outbox` lists, `cache` says
  /// stats, `env` lists, `auth` says status, `config` shows), with the group's options.
  @Test func aGroupNamedAloneRunsItsReadingSubcommand() async {
    for (group, reading) in [
      ("outbox", "list"), ("cache", "stats"), ("env", "list"), ("auth", "status"),
      ("config", "show"),
    ] {
      let alone = await kernel(group, "--format", "json")
      let named = await kernel(group, reading, "--format", "json")
      #expect(alone.code == 0 && named.code == 0, "\(group): \(alone.errors)")
      #expect(!alone.output.isEmpty && alone.output == named.output, "\(group): \(alone.output)")
    }
  }

  /// `--version` says the app's name and Kernel's version, with the app's own when it gives one.
  @Test func versionSaysTheAppsAndKernelsVersions() async {
    let ran = await kernel("--version")
    #expect(ran.code == 0 && ran.errors.isEmpty, "\(ran.errors)")
    #expect(ran.output == "kernel (Kernel \(KernelApp.kernelVersion))\n")
    var line = CommandLineApp(KernelApp(name: "books"), abstract: "Books.")
    line.version = "1.2"
    let captured = CapturedOutput()
    #expect(await line.run(["--version"], output: captured.output(), variables: [:]) == 0)
    #expect(captured.standardOutput == "books 1.2 (Kernel \(KernelApp.kernelVersion))\n")
  }

  @Test func anUnknownCommandIsAUsageError() async {
    let ran = await kernel("films")
    #expect(ran.code == 64)
    #expect(ran.output.isEmpty)
    #expect(!ran.errors.isEmpty)
  }

  @Test func anUnknownProfileIsAConfigErrorNamingTheValidOnes() async {
    let ran = await kernel("graph", "--profile", "nightly")
    #expect(ran.code == 78)
    #expect(ran.errors.contains("\"nightly\""))
    #expect(ran.errors.contains("api, layered, offline"))
  }

  /// A user and password in a base URL go only with `auth: basic`: with another authenticator
  /// they are a config error naming where they were written, never silently left unsent.
  @Test func aUserInABaseURLWithoutBasicAuthIsAConfigError() async {
    let url = "http://reader:hunter2@127.0.0.1:9/api/"
    let refused = await kernel("--environment", "local", "--base-url", url, "auth", "status")
    #expect(refused.code == 78)
    #expect(
      refused.errors.contains("--base-url")
        && refused.errors.contains("unless environments.local.auth sends them (basic)"),
      "\(refused.errors)")
    #expect(!refused.errors.contains("hunter2"))
    let basic = await kernel(
      "--environment", "local", "--base-url", url, "--environments-local-auth", "basic", "auth",
      "status")
    #expect(basic.code == 0, "\(basic.errors)")
    #expect(basic.output.contains("sends its HTTP Basic user and password from the config"))
  }

  /// A full disk is exit 74 and one sentence; a reader that has gone is 141, quietly.
  @Test(arguments: [
    (
      OutputFailure(code: 74, reason: "No space left on device"),
      ["kernel could not write its output: No space left on device; nothing more was written.\n"]
    ),
    (OutputFailure(code: 141, reason: nil), []),
  ])
  func anOutputThatCannotBeWrittenEndsTheRunWithItsCode(
    failure: OutputFailure, errors expected: [String]
  ) async {
    let errors = Recorder<String>()
    let broken = Output(result: { _ in throw failure }, diagnostic: { errors.append($0) })
    let ran = await kernel("env", "list", output: broken)
    #expect(ran.code == failure.code)
    #expect(errors.all == expected)
  }
}

extension InProcessCommandTests {
  /// A download's `--output`: a path is that file; `-` is standard output, unless that is a
  /// terminal, which binary bytes would garble (a usage error naming the option).
  @Test func aDownloadsDashIsStandardOutputUnlessThatIsATerminal() throws {
    #expect(try Invocation.downloadFile("poster.jpg").lastPathComponent == "poster.jpg")
    if isatty(STDOUT_FILENO) == 0 {
      #expect(try Invocation.downloadFile("-").path == "/dev/stdout")
    } else {
      let refused = #expect(throws: UsageError.self) {
        try Invocation.downloadFile("-", option: "-o")
      }
      #expect(refused?.description.hasPrefix("-o - writes the download's bytes") == true)
    }
  }
}
