import Api
import ArgumentParser
import Domain

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
      let container = try session.apiContainer()
      _ = try await container.resolve((any AuthService).self).authorize()
      let context = try container.resolve((any ApiContext).self)
      try Reply.say(
        session, "Logged in to \(context.environment.name); \(AuthCommand.kept(session)).",
        ["environment": context.environment.name, "loggedIn": true])
    }
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status", abstract: "Whether a token is kept (never the token).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let session = try Session(global)
      let context = try session.apiContainer().resolve((any ApiContext).self)
      let name = context.environment.name
      let text =
        context.token == nil
        ? "Not logged in to \(name); kernel auth login fetches a token."
        : "Logged in to \(name): a token is kept (redacted)."
      try Reply.say(session, text, ["environment": name, "loggedIn": context.token != nil])
    }
  }

  struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout", abstract: "Forget the current environment's token.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let session = try Session(global)
      let context = try session.apiContainer().resolve((any ApiContext).self)
      try context.store(token: nil)
      try Reply.say(
        session, "Logged out of \(context.environment.name).",
        ["environment": context.environment.name, "loggedIn": false])
    }
  }

  static func kept(_ session: Session) -> String {
    session.config.context == .persistent
      ? "the token is saved in \(session.runtime.dataDirectory.appendingPathComponent("context.json").path) (0600)"
      : "the token is kept for this run only (context: memory)"
  }
}
