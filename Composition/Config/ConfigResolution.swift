import Api
import Configuration
import Domain
import Foundation

extension ConfigDocument {
  /// The configuration of `profile` (else the one flag, variable or file names): every key
  /// looked up in order of precedence, checked, with its source.
  public func resolve(profile requested: String? = nil) throws -> KernelConfig {
    var resolver = Resolver(document: self, profile: nil)
    let profile = try requested ?? resolver.string(["profile"], default: "layered")
    guard profileNames.contains(profile) else {
      let found = try lookup(["profile"], .string, profile: nil)
      throw ConfigError.unknownName(
        file: found?.file ?? file, key: found?.key ?? "profile", name: profile,
        valid: profileNames.sorted())
    }
    resolver.profile = profile

    var environments: [String: KernelConfig.EnvironmentConfig] = [:]
    for name in self.environments(profile: profile) {
      let key = ["environments", name]
      guard let baseURL = try resolver.optionalString(key + ["baseURL"]) else {
        throw ConfigError.malformed(
          file: file, key: "environments.\(name).baseURL", value: "missing",
          expected: "the environment's base URL, such as http://127.0.0.1:8080/api/")
      }
      let scheme = try resolver.string(key + ["tokenScheme"], default: AuthToken.defaultScheme)
      var values: [String: String] = [:]
      for setting in app.catalog.settings.values.sorted(by: { $0.name < $1.name })
      where setting.scope == .environment {
        if case .string(let text)? = try resolver.setting(setting, at: key + [setting.name]) {
          values[setting.name] = text
        }
      }
      environments[name] = KernelConfig.EnvironmentConfig(
        baseURL: baseURL,
        tokenHeader: try resolver.string(key + ["tokenHeader"], default: AuthToken.defaultHeader),
        tokenScheme: scheme.isEmpty ? nil : scheme,
        insecure: try resolver.bool(key + ["insecure"], default: false),
        transport: try resolver.string(key + ["transport"], default: "http"), values: values)
    }

    let environment = try resolver.string(["environment"], default: "sample")
    let baseURL = try resolver.optionalString(["baseURL"])
    let dataDir = try resolver.string(["dataDir"], default: "")
    let context = try resolver.string(["context"], default: "persistent")
    guard app.catalog.contexts[context] != nil else {
      let found = try lookup(["context"], .string, profile: profile)
      throw ConfigError.unknownName(
        file: found?.file ?? file, key: found?.key ?? "context", name: context,
        valid: app.catalog.contexts.keys.sorted())
    }
    let adapters = try resolver.list(["adapters"], default: ["defaultHeaders", "authToken"])
    let retriers = try resolver.list(["retriers"], default: ["authRefresh", "backoff"])
    var retry = KernelConfig.RetryConfig()
    retry.maxRetries = try resolver.int(
      ["retry", "maxRetries"], default: retry.maxRetries,
      in: KernelConfig.RetryConfig.maxRetriesRange)
    retry.baseDelayMs = try resolver.int(
      ["retry", "baseDelayMs"], default: retry.baseDelayMs,
      in: KernelConfig.RetryConfig.baseDelayMsRange)
    retry.retryAfterCapSeconds = try resolver.int(
      ["retry", "retryAfterCapSeconds"], default: retry.retryAfterCapSeconds,
      in: KernelConfig.RetryConfig.retryAfterCapSecondsRange)
    var timeouts = KernelConfig.TimeoutConfig()
    timeouts.requestSeconds = try resolver.int(
      ["timeouts", "requestSeconds"], default: timeouts.requestSeconds,
      in: KernelConfig.TimeoutConfig.secondsRange)
    timeouts.resourceSeconds = try resolver.int(
      ["timeouts", "resourceSeconds"], default: timeouts.resourceSeconds,
      in: KernelConfig.TimeoutConfig.secondsRange)
    timeouts.callSeconds = try resolver.int(
      ["timeouts", "callSeconds"], default: timeouts.callSeconds,
      in: KernelConfig.TimeoutConfig.secondsRange)

    var values: [String: KernelConfig.Value] = [:]
    for setting in app.catalog.settings.values.sorted(by: { $0.name < $1.name })
    where setting.scope == .app {
      values[setting.name] = try resolver.setting(setting, at: [setting.name])
    }

    // A stack per service: the profile's own, else the top level's, with where it was written.
    var profiles: [String: KernelConfig.ProfileConfig] = [:]
    for name in profileNames {
      var own = Resolver(document: self, profile: name)
      var stacks: [String: KernelConfig.Stack] = [:]
      for service in app.catalog.services.keys.sorted() {
        guard let entries = try own.optionalList([service]) else { continue }
        let found = try lookup([service], .stringArray, profile: name)
        stacks[service] = KernelConfig.Stack(entries, key: found?.key ?? service)
      }
      if name == profile { resolver.settings += own.settings }
      profiles[name] = KernelConfig.ProfileConfig(stacks: stacks)
    }

    var config = KernelConfig(
      file: file, profile: profile, environment: environment, environments: environments,
      context: context, adapters: adapters, retriers: retriers, retry: retry, timeouts: timeouts,
      profiles: profiles)
    config.dataDir = dataDir
    config.baseURL = baseURL
    config.settings = resolver.settings
    config.values = values
    if requested != nil {
      config.settings.removeAll { $0.key == "profile" }
      config.settings.insert(.init(key: "profile", value: profile, source: .builtInDefault), at: 0)
    }
    return config
  }

  /// Looks keys up for one profile and notes each value's source.
  private struct Resolver {
    let document: ConfigDocument
    var profile: String?
    var settings: [KernelConfig.Setting] = []

    mutating func value(
      _ key: [String], _ type: ConfigType, default fallback: String?, secret: Bool = false
    ) throws -> ConfigContent? {
      let found = try document.lookup(key, type, profile: profile)
      let shown: String?
      switch found?.content {
      case .string? where secret: shown = "REDACTED"
      case .string(let text)?: shown = Redaction.url(text)
      case .stringArray(let list)?: shown = "[\(list.joined(separator: ", "))]"
      case .int(let number)?: shown = "\(number)"
      case .bool(let flag)?: shown = "\(flag)"
      default: shown = fallback
      }
      if let shown {
        settings.append(
          .init(
            key: key.joined(separator: "."), value: shown,
            source: found?.source ?? .builtInDefault))
      }
      return found?.content
    }

    /// An app setting at `key`, typed as it was declared; a secret is shown redacted.
    mutating func setting(_ setting: AppSetting, at key: [String]) throws -> KernelConfig.Value? {
      switch setting.kind {
      case .string, .secret:
        let secret = setting.kind == .secret
        let found = try value(
          key, .string, default: setting.defaultValue.map { secret ? "REDACTED" : $0 },
          secret: secret)
        guard case .string(let text)? = found ?? setting.defaultValue.map({ .string($0) }) else {
          return nil
        }
        return .string(text)
      case .integer:
        let fallback = setting.defaultValue.flatMap { Int($0) }
        guard case .int(let number)? = try value(key, .int, default: setting.defaultValue) else {
          return fallback.map { .integer($0) }
        }
        try check(number, at: key, in: setting.range)
        return .integer(number)
      case .boolean:
        let fallback = setting.defaultValue.flatMap { ConfigSchema.boolean($0) }
        guard case .bool(let flag)? = try value(key, .bool, default: setting.defaultValue) else {
          return fallback.map { .boolean($0) }
        }
        return .boolean(flag)
      case .list:
        let fallback = setting.defaultValue.map {
          $0.split(separator: ",").map { $0.trimmingSpaces() }
        }
        guard case .stringArray(let list)? = try value(key, .stringArray, default: nil) else {
          return fallback.map { .list($0) }
        }
        return .list(list)
      }
    }

    mutating func optionalString(_ key: [String]) throws -> String? {
      guard case .string(let text)? = try value(key, .string, default: nil) else { return nil }
      return text
    }

    mutating func string(_ key: [String], default fallback: String) throws -> String {
      guard case .string(let text)? = try value(key, .string, default: fallback) else {
        return fallback
      }
      return text
    }

    /// A whole number in `range`; out of it, a config error naming where it was written and
    /// the range.
    mutating func int(_ key: [String], default fallback: Int, in range: ClosedRange<Int>) throws
      -> Int
    {
      guard case .int(let number)? = try value(key, .int, default: "\(fallback)") else {
        return fallback
      }
      try check(number, at: key, in: range)
      return number
    }

    func check(_ number: Int, at key: [String], in range: ClosedRange<Int>?) throws {
      guard let range, !range.contains(number) else { return }
      let found = try document.lookup(key, .int, profile: profile)
      throw ConfigError.malformed(
        file: found?.file ?? document.file, key: found?.key ?? key.joined(separator: "."),
        value: "\(number)",
        expected: "a whole number from \(range.lowerBound) to \(range.upperBound)")
    }

    mutating func bool(_ key: [String], default fallback: Bool) throws -> Bool {
      guard case .bool(let flag)? = try value(key, .bool, default: "\(fallback)") else {
        return fallback
      }
      return flag
    }

    mutating func optionalList(_ key: [String]) throws -> [String]? {
      guard case .stringArray(let list)? = try value(key, .stringArray, default: nil) else {
        return nil
      }
      return list
    }

    mutating func list(_ key: [String], default fallback: [String]) throws -> [String] {
      let shown = "[\(fallback.joined(separator: ", "))]"
      guard case .stringArray(let list)? = try value(key, .stringArray, default: shown) else {
        return fallback
      }
      return list
    }
  }
}
