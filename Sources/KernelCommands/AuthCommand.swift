import ArgumentParser
import Composition
import Foundation

/// `kernel auth …`: the credential of the current environment, by its authenticator
/// (`environments.<name>.auth`). Nothing ever prints a secret.
struct AuthCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "auth",
    abstract:
      "Log in to the current api environment, or out; show the state (auth status, the default).",
    discussion: """
      The environment's authenticator (environments.<name>.auth) says what a login is: \
      plainToken fetches a token from its route; oauth2 with the password grant takes \
      --username and the password, typed at the terminal without echo or piped in with \
      --password-stdin (never an argument); oauth2 with client credentials, apiKey and basic \
      need no login. The credential is kept for the environment's origin: in context.json in \
      the data dir (0600) with the persistent context.
      """,
    subcommands: [Login.self, Status.self, Logout.self], defaultSubcommand: Status.self)

  struct Login: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "login",
      abstract: "Log in with the environment's authenticator and keep the credential.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "The user to log in as (OAuth 2.0's password grant).") var username: String?
    @Flag(
      name: .customLong("password-stdin"),
      help: "Read the password from standard input, one line (with --username).")
    var passwordStdin = false

    func validate() throws {
      if passwordStdin && username == nil {
        throw ValidationError("--password-stdin goes with --username: whose password is it?")
      }
    }

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      let credential = try api.credential
      let name = try api.current.name
      // A key or password from the config is sent as it is configured and never stored: a
      // login would only keep a copy that a rotated key in the config no longer changes.
      if credential.isConfigured {
        try Reply.say(
          invocation,
          "\(name) sends its \(credential.kind) from the config; there is nothing to log in to"
            + (username == nil ? "." : " (--username is not used)."),
          ["environment": name, "loggedIn": false, "authenticator": credential.authenticator])
        return
      }
      var password: String?
      if username != nil {
        password =
          passwordStdin
          ? try SecretInput.line(naming: "password")
          : try SecretInput.typed("Password: ", stdinFlag: "--password-stdin")
      }
      try await api.login(username: username, password: password)
      try Reply.say(
        invocation, "Logged in to \(name); \(AuthCommand.kept(invocation, api)).",
        ["environment": name, "loggedIn": true, "authenticator": credential.authenticator])
    }
  }

  struct Status: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "status",
      abstract: "The credential's kind, origin and expiry (never the credential).")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      let name = try api.current.name
      let credential = try api.credential
      let expiry = credential.expiresAt.map { $0.ISO8601Format() }
      let text: String
      if credential.isKept {
        let expired = credential.expiresAt.map { $0 <= Date() } ?? false
        text =
          "Logged in to \(name) with \(credential.kind) for \(credential.origin)"
          + (expiry.map {
            expired ? "; it expired \($0) and is refreshed when next used" : "; it expires \($0)"
          } ?? "") + "."
      } else if credential.isUnreadable {
        text =
          "Not logged in to \(name): the saved credential for \(credential.origin) cannot be read"
          + " (another version of \(invocation.app.name) saved it?), so it is never sent;"
          + " \(invocation.app.name) auth login logs in again."
      } else if credential.isConfigured {
        text = "\(name) sends its \(credential.kind) from the config to \(credential.origin)."
      } else if credential.authenticator == "none" {
        text = "\(name) uses no authentication (environments.\(name).auth is none)."
      } else {
        text =
          "Not logged in to \(name), which uses \(credential.kind);"
          + " \(invocation.app.name) auth login logs in."
      }
      var fields: [String: any Sendable] = [
        "environment": name, "loggedIn": credential.isKept,
        "authenticator": credential.authenticator, "kind": credential.kind,
        "origin": credential.origin, "configured": credential.isConfigured,
        "unreadable": credential.isUnreadable,
      ]
      if let expiry { fields["expiresAt"] = expiry }
      try Reply.say(invocation, text, fields)
    }
  }

  struct Logout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      commandName: "logout", abstract: "Forget the current environment's credential.")
    @OptionGroup var global: GlobalOptions

    func run() async throws {
      let invocation = try Invocation(global)
      let api = try invocation.api()
      // A credential that cannot be read is forgotten all the same, and said to be.
      let kept = (try? api.isLoggedIn) ?? true
      try api.logout()
      let name = try api.current.name
      try Reply.say(
        invocation,
        kept
          ? "Logged out of \(name)."
          : "Not logged in to \(name); there was no credential to forget.",
        ["environment": name, "loggedIn": false, "wasLoggedIn": kept])
    }
  }

  static func kept(_ invocation: Invocation, _ api: ApiAccess) -> String {
    api.contextPersists
      ? "the credential is saved in \(invocation.runtime.dataDirectory.appendingPathComponent("context.json").path) (0600)"
      : "the credential is kept for this run only (context: \(invocation.config.context))"
  }
}
