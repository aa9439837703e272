import Foundation
import KernelTesting
import Testing

/// The built `books`, run as a process: against its fixtures served by `books serve`, then with
/// the server stopped; and every generic command of Kernel under its own name and prefix.
@Suite(.timeLimit(.minutes(2))) struct CommandLineTests {
  /// `books` with its config in its working directory, where it looks by default.
  static func books() throws -> BuiltCommand {
    let books = try BuiltCommand("books", package: ContainerTests.package)
    let config = ContainerTests.package.appendingPathComponent("Config/books.yaml")
    try books.write(try String(contentsOf: config, encoding: .utf8), to: "Config/books.yaml")
    return books
  }

  static var fixtures: String { ContainerTests.package.appendingPathComponent("Fixtures").path }

  @Test func whatTheLayeredProfileFetchedTheOfflineOnePrintsWithTheServerStopped() async throws {
    let books = try Self.books()
    defer { books.cleanUp() }
    let server = try await ServedCommand(books, ["--fixtures", Self.fixtures])
    defer { server.terminate() }
    let url = ["--base-url", server.baseURL]
    let layered = try await books.run(url + ["--profile", "layered", "shelf"])
    #expect(layered.status == 0, "\(layered)")
    let json = try await books.run(url + ["get", "2", "--format", "json"])
    // A write, run by the same stack: sent, and the library's book printed.
    let added = try await books.run(url + ["add", "--title", "Middlemarch", "--author", "Eliot"])
    #expect(added.status == 0 && added.stdout.contains("Middlemarch"), "\(added)")
    await server.stop()

    // Offline, with the same base URL: the cache keeps each origin's answers apart.
    let offline = try await books.run(url + ["shelf"], variables: ["BOOKS_PROFILE": "offline"])
    #expect(offline.status == 0, "\(offline)")
    let lines = { (run: BuiltCommand.Run) in run.stdout.split(separator: "\n").dropLast() }
    // The shelf is two pages, walked to the end; each book's ISO 8601 timestamp read.
    #expect(
      lines(layered) == [
        "1  Dune, Frank Herbert (added 2026-01-05)", "2  Emma, Jane Austen (added 2026-02-11)",
        "3  Beloved, Toni Morrison (added 2026-03-20)",
      ])
    #expect(lines(offline) == lines(layered))
    #expect(layered.stdout.contains("3 books from the api in"))
    #expect(offline.stdout.contains("3 books from cache,"))
    // The app's own setting, by its flag, before or after the command.
    let first = try await books.run(
      url + ["--per-page", "1", "shelf"], variables: ["BOOKS_PROFILE": "offline"])
    #expect(lines(first) == ["1  Dune, Frank Herbert (added 2026-01-05)"], "\(first)")
    let shown = try await books.run(["config", "show", "--per-page", "1"])
    #expect(
      shown.stdout.split(separator: "\n").contains {
        $0.hasPrefix("perPage ") && $0.hasSuffix("(flag --per-page)")
      }, "\(shown)")
    let cached = try await books.run(
      url + ["--profile", "offline", "get", "2", "--format", "json"])
    // The same books, from the cache, with their age.
    let titles = { (run: BuiltCommand.Run) in
      (run.json?["books"] as? [[String: Any]])?.map { $0["title"] as? String }
    }
    #expect(titles(cached) == ["Emma"] && titles(json) == ["Emma"], "\(cached)")
    #expect(cached.json?["origin"] as? String == "cache")
    #expect(cached.json?["ageSeconds"] is Int && json.json?["ageSeconds"] == nil, "\(cached)")
    // Book 3 was never read on its own: seen on the shelf, it is answered offline all the same.
    let seen = try await books.run(url + ["--profile", "offline", "get", "3", "--format", "json"])
    #expect(seen.status == 0 && seen.json?["origin"] as? String == "cache", "\(seen)")
    #expect(seen.stdout.contains("Beloved"), "\(seen)")
    // The timestamp to the millisecond, from the api and from the cache alike.
    #expect(json.stdout.contains(#""addedAt":"2026-02-11T17:04:12.007Z""#), "\(json)")
    // A write needs the api: offline it is refused, nothing made up.
    let offlineAdd = try await books.run(
      url + ["--profile", "offline", "add", "--title", "Middlemarch", "--author", "George Eliot"])
    #expect(offlineAdd.status == 69 && offlineAdd.stdout.isEmpty, "\(offlineAdd)")
    #expect(
      offlineAdd.stderr.hasPrefix("A new book needs the api, and this profile's stack has none"))
  }

  /// `books sync` brings the store up to date with the library's changes feed (a flat
  /// `{items, deleted, next_cursor}` feed, one declaration): a book added shows offline, one
  /// deleted leaves the shelf and answers "not found"; a second sync asks from the kept cursor;
  /// after a sync alone, the shelf offline is every stored book.
  @Test func syncAppliesTheLibrarysChangesFeed() async throws {
    let books = try Self.books()
    defer { books.cleanUp() }
    let server = try await ServedCommand(books, ["--fixtures", Self.fixtures])
    defer { server.terminate() }
    let url = ["--base-url", server.baseURL]
    #expect(try await books.run(url + ["shelf"]).status == 0)
    let first = try await books.run(url + ["sync"])
    #expect(first.status == 0 && first.stdout.contains("+2 ~0 -1 books"), "\(first)")
    let again = try await books.run(url + ["sync", "--format", "json"])
    let feeds = again.json?["feeds"] as? [[String: Any]]
    #expect(feeds?.first?["created"] as? Int == 0 && feeds?.first?["token"] as? String == "c2")
    await server.stop()

    let offline = url + ["--profile", "offline"]
    let shelf = try await books.run(offline + ["shelf"])
    #expect(!shelf.stdout.contains("Emma"), "\(shelf)")
    #expect(shelf.stdout.contains("Beloved"), "\(shelf)")
    let added = try await books.run(offline + ["get", "4"])
    #expect(added.status == 0 && added.stdout.contains("Middlemarch"), "\(added)")
    #expect(try await books.run(offline + ["get", "2"]).status == 66)

    // With nothing but a sync stored, the shelf offline is the stored books, all there are.
    let synced = try Self.books()
    defer { synced.cleanUp() }
    let library = try await ServedCommand(synced, ["--fixtures", Self.fixtures])
    defer { library.terminate() }
    let there = ["--base-url", library.baseURL]
    #expect(try await synced.run(there + ["sync"]).status == 0)
    let stored = try await synced.run(
      there + ["--profile", "offline", "shelf", "--format", "json"])
    let ids = (stored.json?["books"] as? [[String: Any]])?.compactMap { $0["id"] as? Int }
    #expect(ids == [3, 4] && stored.json?["complete"] as? Bool == true, "\(stored)")
  }

  @Test func kernelsCommandsWorkUnderTheAppsNamePrefixAndDataDir() async throws {
    let books = try Self.books()
    defer { books.cleanUp() }
    let shown = try await books.run(["config", "show", "--format", "json"])
    #expect(shown.json?["file"] as? String == "Config/books.yaml", "\(shown)")
    #expect(shown.json?["dataDir"] as? String == books.dataDirectory.path)
    let graph = try await books.run(["graph"], variables: ["BOOKS_PROFILE": "offline"])
    #expect(
      graph.status == 0 && graph.stdout.contains("ServiceStack tagged \"books\"")
        && !graph.stdout.contains("ApiClient"))
    #expect(try await books.run(["doctor"]).status == 0)
    #expect(try await books.run(["env", "use", "staging"]).status == 0)
    #expect(try await books.run(["env", "list"]).stdout.contains("* staging"))
    #expect(try await books.run(["env", "use", "local"]).status == 0)

    let server = try await ServedCommand(
      books, ["--fixtures", Self.fixtures, "--require-auth", "--oauth"])
    defer { server.terminate() }
    let url = ["--base-url", server.baseURL]
    // OAuth 2.0's password grant, from the app's config; the password is piped, never an argument.
    let login = try await books.run(
      url + ["auth", "login", "--username", "u", "--password-stdin"], input: "pw\n")
    #expect(login.stdout.hasPrefix("Logged in to local;"), "\(login)")
    #expect(try await books.run(url + ["get", "1"]).status == 0)
    // A POST with a JSON body, answered 201 by the fixture folder's books.post.json.
    let added = try await books.run(
      url + ["add", "--title", "Middlemarch", "--author", "George Eliot", "--format", "json"])
    #expect(
      (added.json?["books"] as? [[String: Any]])?.first?["title"] as? String == "Middlemarch",
      "\(added)")
    let status = try await books.run(url + ["auth", "status", "--format", "json"])
    #expect(status.json?["loggedIn"] as? Bool == true)
    #expect(try await books.run(["cache", "stats"]).stdout.contains("answers: 1"))
    #expect(
      try await books.run(["cache", "clear"]).stdout == "Cleared the cache: 1 answer removed.\n")
    #expect(try await books.run(url + ["auth", "logout"]).status == 0)
    await server.stop()

    // Kernel's exit codes and one-sentence failures, named for this app.
    let failures: [([String], [String: String], Int32, String)] = [
      (["shelf"], ["BOOKS_PROFILE": "nope"], 78, "BOOKS_PROFILE names \"nope\""),
      (["shelf"], ["BOOKS_FORMAT": "xml"], 64, "BOOKS_FORMAT is \"xml\""),
      (["get", "0"], [:], 64, "A book's id is a positive number, not 0."),
      (
        ["--profile", "api", "--base-url", "http://127.0.0.1:9/api/", "get", "1"], [:], 69,
        "books/1"
      ),
      (["--profile", "offline", "get", "3"], [:], 69, "Nothing is cached for book 3"),
    ]
    for (arguments, variables, code, fragment) in failures {
      let run = try await books.run(arguments, variables: variables)
      #expect(run.status == code, "\(arguments) \(variables): \(run)")
      #expect(run.stderr.contains(fragment), "\(arguments): \(run)")
    }
    // KERNEL_* means nothing to books.
    #expect(
      try await books.run(["config", "show"], variables: ["KERNEL_PROFILE": "nope"]).status == 0)
  }
}

extension CommandLineTests {
  /// Run from a folder without its config, `books` uses the copy built into it (the README's
  /// recipe), and `--help` names its own environments.
  @Test func itRunsFromAnyFolderOnItsBuiltInConfig() async throws {
    let books = try BuiltCommand("books", package: ContainerTests.package)
    defer { books.cleanUp() }
    let shown = try await books.run(["config", "show", "--format", "json"])
    #expect(shown.status == 0, "\(shown)")
    #expect(shown.json?["file"] as? String == "the built-in config", "\(shown)")
    let file = try String(
      contentsOf: ContainerTests.package.appendingPathComponent("Config/books.yaml"),
      encoding: .utf8)
    let source = try String(
      contentsOf: ContainerTests.package.appendingPathComponent(
        "Sources/BooksKit/BooksConfig.swift"), encoding: .utf8)
    // The built-in copy is the file: run scripts/embed-config (its header says how) if not.
    for line in file.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
      #expect(source.contains("    " + line), "\(line)")
    }
    let help = try await books.run(["--help"])
    let words = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    #expect(words.contains("NAME is one of the config's environments: local, staging."), "\(help)")
    // `--environment` names the app's own environments, not Kernel's.
    #expect(
      words.contains("The api environment, one of the config's: local, staging. (BOOKS_"),
      "\(help)")
    // Its fixtures are found from where it runs: away from them, `serve` says where to run it.
    let serve = try await books.run(["serve", "--port", "0"])
    #expect(serve.status == 64, "\(serve)")
    #expect(
      serve.stderr.hasSuffix(
        "(the app's own fixtures, found from the working directory: run it where Fixtures is, or"
          + " name a folder with --fixtures DIR).\n"), "\(serve)")
  }
}
