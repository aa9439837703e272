import ArgumentParser
import Composition

/// `kernel config show`: every resolved value of the profile and where it came from.
struct ConfigCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "config",
    abstract: "Show the resolved config (config show, the default), or every key it takes.",
    subcommands: [Show.self, Reference.self], defaultSubcommand: Show.self)

  /// `config reference`: the settings table as Markdown, for an app's README.
  struct Reference: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "reference",
      abstract:
        "Every config key: its built-in value, variable, flag and meaning (Markdown, or JSON).",
      discussion: "--format json prints the same as one JSON object, {\"keys\": [...]}.")
    /// `--format json`; the other global options mean nothing to it, so none is listed.
    @OptionGroup(visibility: .hidden) var global: GlobalOptions

    func run() async throws {
      let app = CommandLineApp.current.app
      if try Invocation.format(global, allowed: [.text, .json]) == .json {
        try Terminal.printExact(try Reply.json(ConfigReference.json(for: app)))
      } else {
        try Terminal.printExact(ConfigReference.markdown(for: app))
      }
    }
  }

  struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "show",
      abstract:
        "The profile's resolved values, each with its source: flag, variable, profile, file or default.",
      discussion: "Secrets (a password in a URL) are redacted; the token is never shown.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let settings = invocation.config.settings
      let dataDir = invocation.runtime.dataDirectory.path
      if invocation.format == .json {
        let values = settings.map {
          ["key": $0.key, "value": $0.value, "source": $0.source.description]
        }
        try Terminal.printExact(
          try Reply.json(["file": invocation.config.file, "dataDir": dataDir, "settings": values]))
        return
      }
      try Terminal.print("config: \(invocation.config.file)")
      try Terminal.print("data dir: \(dataDir)")
      let width = settings.map(\.key.count).max() ?? 0
      let valueWidth = min(60, settings.map(\.value.count).max() ?? 0)
      for setting in settings {
        let key = setting.key.padding(toLength: width, withPad: " ", startingAt: 0)
        let value = setting.value.padding(
          toLength: max(valueWidth, setting.value.count), withPad: " ", startingAt: 0)
        try Terminal.print("\(key)  \(value)  (\(setting.source))")
      }
    }
  }
}
