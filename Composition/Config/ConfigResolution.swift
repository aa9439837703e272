import Configuration
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
      let scheme = try resolver.string(key + ["tokenScheme"], default: "Bearer")
      environments[name] = KernelConfig.EnvironmentConfig(
        baseURL: baseURL,
        tokenHeader: try resolver.string(key + ["tokenHeader"], default: "Authorization"),
        tokenScheme: scheme.isEmpty ? nil : scheme,
        insecure: try resolver.bool(key + ["insecure"], default: false))
    }

    let environment = try resolver.string(["environment"], default: "sample")
    let baseURL = try resolver.optionalString(["baseURL"])
    let dataDir = try resolver.string(["dataDir"], default: "")
    let contextName = try resolver.string(["context"], default: "persistent")
    guard let context = KernelConfig.ContextKind(rawValue: contextName) else {
      let found = try lookup(["context"], .string, profile: profile)
      throw ConfigError.unknownName(
        file: found?.file ?? file, key: found?.key ?? "context", name: contextName,
        valid: KernelConfig.ContextKind.allCases.map(\.rawValue))
    }
    let adapters = try resolver.list(["adapters"], default: ["defaultHeaders", "authToken"])
    let retriers = try resolver.list(["retriers"], default: ["authRefresh", "backoff"])
    var retry = KernelConfig.RetryConfig()
    retry.maxRetries = try resolver.int(["retry", "maxRetries"], default: retry.maxRetries)
    retry.baseDelayMs = try resolver.int(["retry", "baseDelayMs"], default: retry.baseDelayMs)
    retry.retryAfterCapSeconds = try resolver.int(
      ["retry", "retryAfterCapSeconds"], default: retry.retryAfterCapSeconds)
    var timeouts = KernelConfig.TimeoutConfig()
    timeouts.requestSeconds = try resolver.int(
      ["timeouts", "requestSeconds"], default: timeouts.requestSeconds)
    timeouts.resourceSeconds = try resolver.int(
      ["timeouts", "resourceSeconds"], default: timeouts.resourceSeconds)

    var profiles: [String: KernelConfig.ProfileConfig] = [:]
    for name in profileNames {
      var own = Resolver(document: self, profile: name)
      guard let movies = try own.optionalList(["movies"]) else {
        throw ConfigError.malformed(
          file: file, key: "profiles.\(name).movies", value: "missing",
          expected: "a stack such as [logging, cache(networkFirst), api]")
      }
      if name == profile { resolver.settings += own.settings }
      profiles[name] = KernelConfig.ProfileConfig(movies: movies)
    }

    var config = KernelConfig(
      file: file, profile: profile, environment: environment, environments: environments,
      context: context, adapters: adapters, retriers: retriers, retry: retry, timeouts: timeouts,
      profiles: profiles)
    config.dataDir = dataDir
    config.baseURL = baseURL
    config.settings = resolver.settings
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

    mutating func value(_ key: [String], _ type: ConfigType, default fallback: String?) throws
      -> ConfigContent?
    {
      let found = try document.lookup(key, type, profile: profile)
      let shown: String?
      switch found?.content {
      case .string(let text)?: shown = KernelConfig.redacted(text)
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

    mutating func int(_ key: [String], default fallback: Int) throws -> Int {
      guard case .int(let number)? = try value(key, .int, default: "\(fallback)") else {
        return fallback
      }
      return number
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

extension KernelConfig {
  /// `text` with the password of a URL's user info replaced, so it can be printed.
  static func redacted(_ text: String) -> String {
    guard var parts = URLComponents(string: text), parts.password != nil else { return text }
    parts.password = "REDACTED"
    return parts.string ?? "REDACTED"
  }
}
