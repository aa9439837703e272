import ArgumentParser
import Composition
import Testing

@testable import KernelCommands

@Suite struct GuessedOptionsTests {
  /// Where only global options are given, the scan finds what ArgumentParser parses.
  @Test(arguments: [
    ["--profile", "offline"], ["--profile=offline", "-v"],
    ["--data-dir", "/x", "--base-url", "http://a"],
    ["--environment", "staging", "--verbose"], ["--config", "c.yaml"],
    ["--format", "json", "--profile", "api"], ["--profile", "a", "--profile", "b"],
    ["--data-dir=/with=equals"], [],
  ])
  func theScanFindsWhatArgumentParserParses(arguments: [String]) throws {
    let parsed = try GlobalOptions.parse(arguments)
    #expect(GuessedOptions(arguments) == GuessedOptions(parsed))
  }

  @Test func optionsAmongACommandsWordsAreFoundAndNothingAfterTheTerminator() {
    let guess = GuessedOptions([
      "movies", "get", "--concurrency", "3", "--profile", "offline", "1", "-v", "--", "--data-dir",
      "/no",
    ])
    #expect(guess.flags == ["profile": "offline"])
    #expect(guess.verbose)
    #expect(guess.config == nil)
  }

  /// What was prepared from the guess is adopted only for the options it was guessed from.
  @Test func onlyTheGuessedOptionsAdoptWhatWasPrepared() throws {
    let early = EarlyStart(KernelApp.kernel, arguments: ["movies", "--profile", "api"])
    let matching = try #require(early.adopt(try GlobalOptions.parse(["--profile", "api"])))
    #expect(try matching.config.get().profile == "api")
    #expect(try matching.runtime?.get() != nil)
    #expect(early.adopt(try GlobalOptions.parse(["--profile", "offline"])) == nil)
    #expect(early.adopt(try GlobalOptions.parse(["--profile", "api", "-v"])) == nil)
    #expect(
      early.adopt(try GlobalOptions.parse(["--profile", "api", "--config", "x.yaml"])) == nil)
  }

  /// With `--config`, nothing is prepared: the session reads the file itself.
  @Test func withAConfigFlagNothingIsPrepared() throws {
    let early = EarlyStart(KernelApp.kernel, arguments: ["--config", "x.yaml"])
    #expect(early.adopt(try GlobalOptions.parse(["--config", "x.yaml"])) == nil)
    // A parse without the --config the scan saw still gets the config read.
    #expect(try early.document(flags: ["profile": "offline"]).resolve().profile == "offline")
  }
}
