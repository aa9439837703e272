/// The config reference, rendered from an app's settings table: every key, its built-in value,
/// the variable and the flag that set it, what it is. Kernel's *Configuration* article holds
/// `markdown(for: .kernel)` and a test keeps it equal; an app renders its own.
package enum ConfigReference {
  /// The reference of `app`'s settings, as a Markdown table.
  public static func markdown(for app: KernelApp) -> String {
    var lines = [
      "| key | built-in | variable | flag | what it is |", "|---|---|---|---|---|",
    ]
    for key in keys(of: app) {
      let builtIn =
        switch key.builtIn {
        case nil: key.isService ? "the profile's" : "none"
        case ""?: "empty"
        case let value?: "`\(value)`"
        }
      let range = key.range.map { " (\($0.lowerBound)–\($0.upperBound))" } ?? ""
      // A secret by flag is visible to every user of the machine (`ps`): the flag warns so.
      let flag =
        "`\(key.flag)`" + (key.isSecret ? " (warns: `ps` shows it; prefer the variable)" : "")
      lines.append(
        "| `\(key.key)` | \(builtIn) | `\(key.variable)` | \(flag) | \(key.doc)\(range) |")
    }
    return lines.joined(separator: "\n")
  }

  /// The reference of `app`'s settings as JSON values, for `config reference --format json`:
  /// each key's `key`, `variable`, `flag`, `description`, and when it has them its `builtIn`
  /// value as written in the file, `range` (`min`, `max`), `secret: true`, `service: true`.
  public static func json(for app: KernelApp) -> [String: any Sendable] {
    let keys = keys(of: app).map { key -> [String: any Sendable] in
      var fields: [String: any Sendable] = [
        "key": key.key, "variable": key.variable, "flag": key.flag, "description": key.doc,
      ]
      fields["builtIn"] = key.builtIn
      fields["range"] = key.range.map { ["min": $0.lowerBound, "max": $0.upperBound] }
      if key.isSecret { fields["secret"] = true }
      if key.isService { fields["service"] = true }
      return fields
    }
    return ["keys": keys]
  }

  /// Every key of `app`'s config in the reference's order, the settings then the services'
  /// stacks: as written (`environments.NAME.baseURL`), its built-in value as written in the file
  /// (a list in brackets; nil for none), its variable and flag, what it is, its range.
  private static func keys(of app: KernelApp) -> [(
    key: String, builtIn: String?, variable: String, flag: String, doc: String,
    range: ClosedRange<Int>?, isSecret: Bool, isService: Bool
  )] {
    let settings = app.catalog.table.map { setting in
      let key =
        setting.scope == .environment
        ? ["environments", "NAME", setting.name]
        : setting.name.split(separator: ".").map(String.init)
      return (
        key: key.joined(separator: "."),
        builtIn: setting.defaultValue.map { setting.kind == .list ? "[\($0)]" : $0 },
        variable: ConfigFlag.variable(key, prefix: app.variablePrefix),
        flag: ConfigFlag.name(key), doc: setting.doc, range: setting.range,
        isSecret: setting.kind == .secret, isService: false
      )
    }
    let services = app.catalog.serviceKeys.map { service in
      (
        key: service, builtIn: String?.none,
        variable: ConfigFlag.variable([service], prefix: app.variablePrefix),
        flag: ConfigFlag.name([service]),
        doc: "the \(service) service's stack: layers, then a source (by flag or variable, split"
          + " on commas)", range: ClosedRange<Int>?.none, isSecret: false, isService: true
      )
    }
    return settings + services
  }
}
