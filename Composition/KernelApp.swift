import Api
import Foundation
import Injection

/// An app built on Kernel: its name, where its config and data live, what it calls itself on
/// the wire, and the catalog its config chooses from. Kernel's own `kernel` is one such app
/// (`KernelApp.kernel`, in the example's module); an app makes its own and adds its assemblies.
///
/// ```swift
/// var app = KernelApp(name: "books")   // BOOKS_* variables, Config/books.yaml, data dir "books"
/// app.catalog.service("books")
/// let document = try app.load(path: nil, workingDirectory: cwd, variables: env)
/// let composed = try app.compose(config: try document.resolve(), runtime: runtime)
/// ```
public struct KernelApp: Sendable {
  /// The command's name: `kernel`, `books`.
  public var name: String
  /// Variables are this, `_`, then the key's path in capitals: `BOOKS_PROFILE`.
  public var variablePrefix: String
  /// The config file read from the working directory when none is named.
  public var configFile: String
  /// The folder under `$XDG_DATA_HOME` (else `~/.local/share`) holding the cache and context.
  public var dataDirectoryName: String
  /// Sent by the `defaultHeaders` adapter.
  public var userAgent: String
  /// The config used when no file is named or found; nil: the file must exist.
  public var builtInConfig: (name: String, yaml: String)?
  /// Everything the config may name. Starts with Kernel's parts (`KernelAssembly`).
  public var catalog: Catalog

  /// An app named `name`; the other values default from it (`NAME_*` variables, `Config/name.yaml`,
  /// data dir `name`, `User-Agent: name/<version> Kernel (<platform>)`). A variable's name holds
  /// letters, digits and `_` alone, so any other character of `name` is `_` in the prefix:
  /// `movies-openapi` reads `MOVIES_OPENAPI_PROFILE`.
  public init(
    name: String, variablePrefix: String? = nil, configFile: String? = nil,
    dataDirectoryName: String? = nil, userAgent: String? = nil,
    builtInConfig: (name: String, yaml: String)? = nil
  ) {
    self.name = name
    self.variablePrefix =
      variablePrefix
      ?? String(name.uppercased().map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "_" })
    self.configFile = configFile ?? "Config/\(name).yaml"
    self.dataDirectoryName = dataDirectoryName ?? name
    self.userAgent =
      userAgent ?? "\(name)/\(KernelVersion.current) Kernel (\(DefaultHeadersAdapter.platform))"
    self.builtInConfig = builtInConfig
    var catalog = Catalog()
    catalog.add(KernelAssembly())
    self.catalog = catalog
  }

  /// Kernel's own version (`0.1.0`), as its `User-Agent` and `--version` say it.
  public static var kernelVersion: String { KernelVersion.current }

  /// Adds one feature's registrations to the catalog.
  public mutating func add(_ assembly: some Assembly) { catalog.add(assembly) }

  // MARK: Reading the config

  /// The file `--config` / `<PREFIX>_CONFIG` names, else `configFile` under the working
  /// directory when there is one, else the built-in config; with the variables and flags over it.
  public func load(
    path: String?, workingDirectory: URL, variables: [String: String] = [:],
    flags: [String: String] = [:]
  ) throws -> ConfigDocument {
    try ConfigDocument.load(
      path: path, workingDirectory: workingDirectory, variables: variables, flags: flags, app: self)
  }

  /// The config in `yaml` (named `file` in messages), with the variables and flags over it.
  public func document(
    yaml: String, file: String, variables: [String: String] = [:], flags: [String: String] = [:]
  ) throws -> ConfigDocument {
    try ConfigDocument(text: yaml, file: file, variables: variables, flags: flags, app: self)
  }

  /// `dataDir` from the config, else `$XDG_DATA_HOME/<dataDirectoryName>`, else
  /// `~/.local/share/<dataDirectoryName>`. Nothing is created.
  public func dataDirectory(
    config: KernelConfig, variables: [String: String], workingDirectory: URL
  ) throws -> URL {
    if !config.dataDir.isEmpty {
      return URL(fileURLWithPath: config.dataDir, relativeTo: workingDirectory).standardizedFileURL
    }
    if let xdg = variables["XDG_DATA_HOME"], xdg.hasPrefix("/") {
      return URL(fileURLWithPath: xdg).appendingPathComponent(dataDirectoryName)
    }
    guard let home = variables["HOME"], !home.isEmpty else {
      throw ConfigError.unusable(
        file: "the environment", key: "HOME",
        reason: "it is not set, so there is no default data dir; pass --data-dir")
    }
    return URL(fileURLWithPath: home).appendingPathComponent(".local/share/\(dataDirectoryName)")
  }

  // MARK: Building the object graph

  /// The one way to build a profile's graph, for the command front, tests and an app alike:
  /// the registrations `profile` (the config's when nil) needs, with `overriding` applied in a
  /// child (a test's clock or transport), validated and started. Nothing is created until a
  /// call needs it; `Composed.api` reaches the api side whatever the profile's stacks.
  public func compose(
    config: KernelConfig, profile: String? = nil, runtime: Runtime,
    overriding: (@Sendable (Container) throws -> Void)? = nil
  ) throws -> Composed {
    let composer = Composer(app: self, config: config, runtime: runtime)
    let registered: (container: Container, hasApi: Bool, hasOutbox: Bool)
    do { registered = try composer.compose(profile: profile) } catch let error as ConfigError {
      throw error.placed(in: config, prefix: variablePrefix)
    }
    let container = try Self.started(registered.container, overriding: overriding)
    return Composed(
      container: container, composer: composer, profileHasApi: registered.hasApi,
      profileHasOutbox: registered.hasOutbox, profile: profile ?? config.profile,
      overriding: overriding)
  }

  /// `container`, or a child of it with `overriding` applied, validated and started.
  static func started(
    _ container: Container, overriding: (@Sendable (Container) throws -> Void)?
  ) throws
    -> Container
  {
    var container = container
    if let overriding {
      container = container.child()
      try overriding(container)
    }
    try container.validate()
    try container.bootstrap()
    return container
  }
}
