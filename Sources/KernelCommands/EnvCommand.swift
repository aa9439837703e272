import ArgumentParser
import Composition

/// `kernel env …`: the api environments and the one in use.
struct EnvCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "env",
    abstract: "List the api environments (env list, the default), or choose the one to use.",
    subcommands: [List.self, Use.self], defaultSubcommand: List.self)

  struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "list", abstract: "The environments; * marks the one in use.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      let current = try api.current
      let all = api.environments
      if invocation.format == .json {
        let list = all.map {
          [
            "name": $0.name, "baseURL": $0.baseURL,
            "current": $0.name == current.name,
          ]
            as [String: any Sendable]
        }
        try Terminal.printExact(try Reply.json(["current": current.name, "environments": list]))
        return
      }
      let width = all.map(\.name.count).max() ?? 0
      for environment in all {
        let mark = environment.name == current.name ? "*" : " "
        let note = environment.inProcess ? "  (answered in process)" : ""
        let name = environment.name.padding(toLength: width, withPad: " ", startingAt: 0)
        try Terminal.print("\(mark) \(name)  \(environment.baseURL)\(note)")
      }
    }
  }

  struct Use: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "use",
      abstract: "Save NAME as the environment to use; --environment still wins for one run.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "An environment of the config, e.g. local.") var name: String

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      guard try api.use(name) else {
        throw UsageError(
          "There is no environment \"\(name)\" in \(invocation.config.file); the environments are: "
            + invocation.config.environments.keys.sorted().joined(separator: ", ") + ".")
      }
      var lasting =
        api.contextPersists
        ? "saved for later runs" : "for this run only, as the context is memory"
      // A variable still wins over the saved choice in every run that has it: said, not hidden.
      let setting = invocation.config.settings.first { $0.key == "environment" }
      if let setting, case .variable(let variable) = setting.source, setting.value != name {
        lasting +=
          "; but \(variable) is set to \(setting.value), which chooses instead in every"
          + " run that has it (unset it to use \(name))"
      }
      // A base URL given for this run is not what is saved: said, not silently dropped.
      let base = invocation.config.settings.first { $0.key == "baseURL" }
      let keep = "(set environments.\(name).baseURL in the config to keep a base URL)"
      switch base?.source {
      case .flag(let flag)?: lasting += "; \(flag) is for one run and is not saved \(keep)"
      case .variable(let variable)?:
        lasting +=
          "; \(variable) is not saved: it replaces the base URL in runs that have it \(keep)"
      default: break
      }
      try Reply.say(
        invocation, "Now using \(name) (\(try api.current.baseURL)), \(lasting).",
        ["current": name])
    }
  }
}
