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
      let session = try Session(global)
      let api = try session.api()
      let name = try await api.login()
      try Reply.say(
        session, "Logged in to \(name); \(AuthCommand.kept(session, api)).",
        ["environment": name, "loggedIn": true])
    }
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status", abstract: "Whether a token is kept (never the token).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let session = try Session(global)
      let api = try session.api()
      let name = try api.current.name
      let loggedIn = try api.isLoggedIn
      let text =
        loggedIn
        ? "Logged in to \(name): a token is kept (redacted)."
        : "Not logged in to \(name); \(session.app.name) auth login fetches a token."
      try Reply.say(session, text, ["environment": name, "loggedIn": loggedIn])
    }
  }

  struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout", abstract: "Forget the current environment's token.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let session = try Session(global)
      let api = try session.api()
      try api.logout()
      let name = try api.current.name
      try Reply.say(session, "Logged out of \(name).", ["environment": name, "loggedIn": false])
    }
  }

  static func kept(_ session: Session, _ api: ApiAccess) -> String {
    api.contextPersists
      ? "the token is saved in \(session.runtime.dataDirectory.appendingPathComponent("context.json").path) (0600)"
      : "the token is kept for this run only (context: \(session.config.context))"
  }
}
