import ArgumentParser
import Composition

/// `kernel auth …`: the token of the current environment. Nothing ever prints the token.
struct AuthCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "auth", abstract: "Log in to the current api environment, or out; show the state.",
    subcommands: [Login.self, Status.self, Logout.self])

  struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "login", abstract: "Fetch a token from the auth route and keep it.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      let name = try await api.login()
      try Reply.say(
        invocation, "Logged in to \(name); \(AuthCommand.kept(invocation, api)).",
        ["environment": name, "loggedIn": true])
    }
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status", abstract: "Whether a token is kept (never the token).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      let name = try api.current.name
      let loggedIn = try api.isLoggedIn
      let text =
        loggedIn
        ? "Logged in to \(name): a token is kept (redacted)."
        : "Not logged in to \(name); \(invocation.app.name) auth login fetches a token."
      try Reply.say(invocation, text, ["environment": name, "loggedIn": loggedIn])
    }
  }

  struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout", abstract: "Forget the current environment's token.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      try api.logout()
      let name = try api.current.name
      try Reply.say(invocation, "Logged out of \(name).", ["environment": name, "loggedIn": false])
    }
  }

  static func kept(_ invocation: Invocation, _ api: ApiAccess) -> String {
    api.contextPersists
      ? "the token is saved in \(invocation.runtime.dataDirectory.appendingPathComponent("context.json").path) (0600)"
      : "the token is kept for this run only (context: \(invocation.config.context))"
  }
}
