import Api
import Configuration
import Domain
import Foundation
import Synchronization

extension ConfigDocument {
  /// The configuration of `profile` (else the one a flag, variable or the file names): every
  /// row of the app's settings table read through one `ConfigReader`, whose providers are, in
  /// order, the flags, the `<PREFIX>_…` variables, the profile's section, the file and the
  /// table's defaults; its access reporter says which one each value came from.
  public func resolve(profile requested: String? = nil) throws -> KernelConfig {
    let rows = app.catalog.table
    var top = Reading(self, profile: nil)
    let profile = try requested ?? top.text(["profile"], rows: rows) ?? "layered"
    guard profileNames.contains(profile) else {
      let written = top.settings.last { $0.key == "profile" }.flatMap(\.written)
      throw ConfigError.unknownName(
        file: written?.file ?? file, key: written?.key ?? "profile", name: profile,
        valid: profileNames.sorted())
    }
    var reading = Reading(self, profile: profile)
    if requested == nil { reading.settings = top.settings }

    var values: [String: KernelConfig.Value] = [:]
    for row in rows where row.scope == .app {
      values[row.name] = try reading.value(row.name.split(separator: ".").map(String.init), row)
    }
    var environments: [String: KernelConfig.EnvironmentConfig] = [:]
    for name in self.environments(profile: profile) {
      var own: [String: KernelConfig.Value] = [:]
      for row in rows where row.scope == .environment {
        own[row.name] = try reading.value(["environments", name, row.name], row)
      }
      guard case .string(let baseURL)? = own["baseURL"] else {
        throw ConfigError.malformed(
          file: file, key: "environments.\(name).baseURL", value: "missing",
          expected: "the environment's base URL, such as http://127.0.0.1:8080/api/")
      }
      environments[name] = KernelConfig.EnvironmentConfig(baseURL: baseURL, values: own)
    }
    guard case .string(let context)? = values["context"], app.catalog.contexts[context] != nil
    else {
      let written = reading.settings.last { $0.key == "context" }.flatMap(\.written)
      throw ConfigError.unknownName(
        file: written?.file ?? file, key: written?.key ?? "context",
        name: values["context"]?.text ?? "", valid: app.catalog.contexts.keys.sorted())
    }

    // A stack per service: the profile's own, else the top level's, with where it was written.
    var profiles: [String: KernelConfig.ProfileConfig] = [:]
    for name in profileNames {
      var own = Reading(self, profile: name)
      var stacks: [String: KernelConfig.Stack] = [:]
      for service in app.catalog.services.keys.sorted() {
        let row = AppSetting(service, .list, doc: "")
        guard case .list(let entries)? = try own.value([service], row) else { continue }
        let written = own.settings.last.flatMap(\.written)
        stacks[service] = KernelConfig.Stack(entries, key: written?.key ?? service)
      }
      if name == profile { reading.settings += own.settings }
      profiles[name] = KernelConfig.ProfileConfig(stacks: stacks)
    }
    var config = KernelConfig(
      file: file, profile: profile, environments: environments, profiles: profiles,
      values: values)
    config.settings = reading.settings
    if requested != nil {
      config.settings.insert(.init(key: "profile", value: profile, source: .builtInDefault), at: 0)
    }
    return config
  }

  /// One profile's view of the document: a `ConfigReader` over the flags, the variables, the
  /// profile's section, the file and the defaults, and the value and source of each key read.
  struct Reading {
    let document: ConfigDocument
    let profile: String?
    let reader: ConfigReader
    /// The layer of each of the reader's providers, in its order.
    let layers: [ConfigDocument.Layer]
    let reporter = Sources()
    var settings: [KernelConfig.Setting] = []

    init(_ document: ConfigDocument, profile: String?) {
      self.document = document
      self.profile = profile
      let section: any ConfigProvider = document.snapshot.mapKeys { [profile] key in
        guard let profile, key.components != ["profile"] else {
          return AbsoluteConfigKey(["profiles", "\u{0}"])
        }
        return AbsoluteConfigKey(["profiles", profile] + key.components)
      }
      // A layer the run has nothing in (no flags, no variables) is left out: no read asks it.
      let providers: [(ConfigDocument.Layer, (any ConfigProvider)?)] = [
        (.flags, document.flags), (.variables, document.variables), (.profile, section),
        (.file, document.snapshot), (.defaults, document.defaults(profile: profile)),
      ]
      let present = providers.compactMap { layer, provider in provider.map { (layer, $0) } }
      layers = present.map(\.0)
      reader = ConfigReader(providers: present.map(\.1), accessReporter: reporter)
    }

    /// A text key of the table (`profile`), read with its source noted.
    mutating func text(_ key: [String], rows: [AppSetting]) throws -> String? {
      guard let row = rows.first(where: { $0.id == key.joined(separator: ".") }) else {
        return nil
      }
      return try value(key, row)?.text
    }

    /// The value of `row` at `key`, typed as the row says, its range checked; its source noted
    /// for `config show`. A value a flag or variable gives that is not of the row's type is an
    /// error naming the flag or variable.
    mutating func value(_ key: [String], _ row: AppSetting) throws -> KernelConfig.Value? {
      let configKey = ConfigKey(key)
      let secret = row.kind == .secret
      let value: KernelConfig.Value?
      switch row.kind {
      case .string, .secret:
        value = reader.string(forKey: configKey, isSecret: secret).map { .string($0) }
      case .integer: value = reader.int(forKey: configKey).map { .integer($0) }
      case .boolean: value = reader.bool(forKey: configKey).map { .boolean($0) }
      case .list: value = reader.stringArray(forKey: configKey).map { .list($0) }
      }
      guard let event = reporter.last else { return value }
      let source = try source(of: event, key: key, row: row)
      if case .integer(let number)? = value, let range = row.range, !range.contains(number) {
        let written = source.flatMap { Self.place($0, document: document, key: key) }
        throw ConfigError.malformed(
          file: written?.file ?? document.file, key: written?.key ?? key.joined(separator: "."),
          value: "\(number)",
          expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
      }
      if let value {
        let shown =
          secret
          ? "REDACTED"
          : row.name == "baseURL" ? Redaction.url(value.text ?? "") : value.shown
        settings.append(
          .init(
            key: key.joined(separator: "."), value: shown, source: source ?? .builtInDefault))
      }
      return value
    }

    /// Which provider gave the value of `event`: the first with one, by its place in the
    /// reader's order. A provider that failed (a variable `abc` for a number) is an error
    /// naming it.
    private func source(of event: AccessEvent, key: [String], row: AppSetting) throws
      -> ConfigDocument.Source?
    {
      for (index, result) in event.providerResults.enumerated() {
        let layer = layers.indices.contains(index) ? layers[index] : .defaults
        switch result.result {
        case .failure:
          let (name, text) = document.written(key, by: layer)
          throw ConfigError.malformed(
            file: layer == .flags ? "the command line" : "the environment", key: name,
            value: row.kind == .secret ? Redaction.placeholder : text,
            expected: row.kind.schema.expectation)
        case .success(let lookup) where lookup.value != nil:
          switch layer {
          case .flags: return .flag(ConfigFlag.name(key))
          case .variables: return .variable(lookup.encodedKey)
          case .profile: return .profile(profile ?? "", file: document.file)
          case .file: return .file(document.file)
          case .defaults: return nil
          }
        case .success: continue
        }
      }
      if event.conversionError != nil {
        throw ConfigError.malformed(
          file: document.file, key: key.joined(separator: "."), value: "?",
          expected: row.kind.schema.expectation)
      }
      return nil
    }

    /// Where `source` wrote `key`, as a message names it.
    static func place(_ source: ConfigDocument.Source, document: ConfigDocument, key: [String])
      -> (file: String, key: String)?
    {
      KernelConfig.Setting(key: key.joined(separator: "."), value: "", source: source).written
    }
  }

  /// The reader's access reporter: the last event, to tell where a value came from.
  final class Sources: AccessReporter, Sendable {
    private let event = Mutex<AccessEvent?>(nil)
    var last: AccessEvent? { event.withLock { $0 } }
    func report(_ event: AccessEvent) { self.event.withLock { $0 = event } }
  }
}

extension KernelConfig.Value {
  /// Its text, for a `.string`.
  var text: String? {
    if case .string(let text) = self { return text }
    return nil
  }

  /// As `config show` prints it.
  var shown: String {
    switch self {
    case .string(let text): text
    case .integer(let number): "\(number)"
    case .boolean(let flag): "\(flag)"
    case .list(let list): "[\(list.joined(separator: ", "))]"
    }
  }
}
