/// The config reference, rendered from an app's settings table: every key, its built-in value,
/// the variable and the flag that set it, what it is. Kernel's *Configuration* article holds
/// `markdown(for: .kernel)` and a test keeps it equal; an app renders its own.
package enum ConfigReference {
  /// The reference of `app`'s settings, as a Markdown table.
  public static func markdown(for app: KernelApp) -> String {
    var lines = [
      "| key | built-in | variable | flag | what it is |", "|---|---|---|---|---|",
    ]
    for setting in app.catalog.table {
      let key =
        setting.scope == .environment
        ? ["environments", "NAME", setting.name]
        : setting.name.split(separator: ".").map(String.init)
      let shown = setting.scope == .environment ? "environments.NAME.\(setting.name)" : setting.name
      let builtIn =
        switch setting.defaultValue {
        case nil: "none"
        case ""?: "empty"
        case let value?: setting.kind == .list ? "`[\(value)]`" : "`\(value)`"
        }
      let range = setting.range.map { " (\($0.lowerBound)–\($0.upperBound))" } ?? ""
      // A secret by flag is visible to every user of the machine (`ps`): the flag warns so.
      let flag =
        setting.kind == .secret
        ? "`\(ConfigFlag.name(key))` (warns: `ps` shows it; prefer the variable)"
        : "`\(ConfigFlag.name(key))`"
      lines.append(
        "| `\(shown)` | \(builtIn) | `\(ConfigFlag.variable(key, prefix: app.variablePrefix))` | \(flag) | \(setting.doc)\(range) |"
      )
    }
    for service in app.catalog.serviceKeys {
      let stack = "the \(service) service's stack: layers, then a source"
      lines.append(
        "| `\(service)` | the profile's | `\(ConfigFlag.variable([service], prefix: app.variablePrefix))` | `\(ConfigFlag.name([service]))` | \(stack) (by flag or variable, split on commas) |"
      )
    }
    return lines.joined(separator: "\n")
  }
}
