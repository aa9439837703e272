/// One registration as introspection shows it.
public struct RegistrationInfo: Sendable, Hashable {
  /// `Type`, `Type tagged "x"` or `Type with arguments (Int)`: the key it is found by.
  public let service: String
  /// How long what it builds is kept.
  public let scope: Scope
  /// The registration it forwards to, for an entry made by `implements`.
  public let forwardsTo: String?
  /// How many decorators wrap what it builds.
  public let decorators: Int
  /// How many `resolvingProperties` hooks run on what it builds.
  public let hooks: Int
}

/// The registrations a container sees and the dependencies observed while resolving them:
/// which service's build resolved which other service (`forwards` for type forwarding).
public struct DependencyGraph: Sendable {
  /// One dependency: the service whose build asked for another.
  public struct Edge: Sendable, Hashable {
    /// The service being built.
    public let from: String
    /// The service it asked for.
    public let to: String
    /// `depends` (resolved while building), `provides` (took a `Provider` of it, which
    /// resolves it at each call) or `forwards` (served by `implements`).
    public let kind: String
  }

  /// Every registration, in the order of their keys.
  public let nodes: [RegistrationInfo]
  /// Every dependency observed so far (a registration never resolved has none yet).
  public let edges: [Edge]

  /// Formats the graph renders to.
  public enum Format: String, Sendable, CaseIterable {
    /// A tree, one service a line, its dependencies below it.
    case text
    /// Graphviz's dot.
    case dot
    /// A Mermaid flowchart, as GitHub renders it.
    case mermaid
  }

  /// The graph written in `format`.
  public func rendered(as format: Format) -> String {
    switch format {
    case .text: textTree
    case .dot: dot
    case .mermaid: mermaid
    }
  }

  /// Each service with what it depends on indented below it; a service met again on its own
  /// branch is marked `(cycle)` instead of repeated.
  var textTree: String {
    let targets = Set(edges.map(\.to))
    let scopes = Dictionary(nodes.map { ($0.service, $0) }, uniquingKeysWith: { first, _ in first })
    var lines: [String] = []
    func visit(_ service: String, lead: String, childLead: String, trail: Set<String>) {
      var label = service
      if let node = scopes[service] {
        label += " [\(node.scope)"
        if node.decorators > 0 { label += ", \(node.decorators) decorator(s)" }
        label += node.hooks > 0 ? ", \(node.hooks) hook(s)]" : "]"
      }
      guard !trail.contains(service) else { return lines.append(lead + label + " (cycle)") }
      lines.append(lead + label)
      let children = edges.filter { $0.from == service }
      for (index, edge) in children.enumerated() {
        let last = index == children.count - 1
        let arrow = edge.kind == "forwards" ? "⇢ " : edge.kind == "provides" ? "↻ " : ""
        visit(
          edge.to, lead: childLead + (last ? "└─ " : "├─ ") + arrow,
          childLead: childLead + (last ? "   " : "│  "), trail: trail.union([service]))
      }
    }
    for root in nodes.map(\.service) where !targets.contains(root) {
      visit(root, lead: "", childLead: "", trail: [])
    }
    return lines.joined(separator: "\n")
  }

  var dot: String {
    var lines = ["digraph dependencies {", "  rankdir=LR;", "  node [shape=box];"]
    for node in nodes.sorted(by: { $0.service < $1.service }) {
      // DOT's `\n` breaks a label's line: written between the escaped parts, not escaped itself.
      let service = escaped(node.service, dotEscapes)
      let scope = escaped("\(node.scope)", dotEscapes)
      lines.append("  \(quoted(node.service)) [label=\"\(service)\\n\(scope)\"];")
    }
    for edge in edges {
      let style =
        edge.kind == "forwards"
        ? " [style=dashed]" : edge.kind == "provides" ? " [style=dotted]" : ""
      lines.append("  \(quoted(edge.from)) -> \(quoted(edge.to))\(style);")
    }
    lines.append("}")
    return lines.joined(separator: "\n")
  }

  var mermaid: String {
    let sorted = nodes.sorted { $0.service < $1.service }
    let ids = Dictionary(
      uniqueKeysWithValues: sorted.enumerated().map { ($0.element.service, "n\($0.offset)") })
    var lines = ["graph LR"]
    for node in sorted {
      // Mermaid reads a label as HTML: `Clock<Duration>` would show as `Clock`, the rest taken
      // for a tag. Its entity codes (`#lt;`) keep the characters.
      let label = escaped(
        "\(node.service) · \(node.scope)",
        ["\"": "#quot;", "<": "#lt;", ">": "#gt;", "&": "#amp;", "#": "#35;"])
      lines.append("  \(ids[node.service] ?? node.service)[\"\(label)\"]")
    }
    for edge in edges {
      let arrow =
        edge.kind == "forwards" ? "-.->" : edge.kind == "provides" ? "-.->|provides|" : "-->"
      lines.append("  \(ids[edge.from] ?? edge.from) \(arrow) \(ids[edge.to] ?? edge.to)")
    }
    return lines.joined(separator: "\n")
  }

  /// What DOT's quoted strings escape: a backslash and a double quote.
  private var dotEscapes: [Character: String] { ["\\": "\\\\", "\"": "\\\""] }

  private func quoted(_ text: String) -> String {
    "\"" + escaped(text, dotEscapes) + "\""
  }

  private func escaped(_ text: String, _ replacements: [Character: String]) -> String {
    text.reduce(into: "") { result, character in
      result += replacements[character] ?? String(character)
    }
  }
}

extension Container {
  /// The registrations this container sees, sorted by service.
  public var registrations: [RegistrationInfo] {
    visibleDefinitions.map { definition in
      RegistrationInfo(
        service: definition.key.description, scope: definition.scope,
        forwardsTo: (definition as? ForwardingEntry)?.targetKey.description,
        decorators: definition.decoratorCount, hooks: definition.hookCount)
    }
    .sorted { $0.service < $1.service }
  }

  /// The registrations with the dependencies observed so far (run `validate()` first to observe
  /// every one) and the forwarding between them.
  public var graph: DependencyGraph {
    let nodes = registrations
    let known = Set(nodes.map(\.service))
    var edges = observedEdges.map {
      DependencyGraph.Edge(
        from: $0.from.description, to: $0.to.description, kind: $0.deferred ? "provides" : "depends"
      )
    }
    edges += nodes.compactMap { node in
      node.forwardsTo.map { DependencyGraph.Edge(from: node.service, to: $0, kind: "forwards") }
    }
    let sorted = edges.filter { known.contains($0.from) }.sorted {
      ($0.from, $0.to, $0.kind) < ($1.from, $1.to, $1.kind)
    }
    return DependencyGraph(nodes: nodes, edges: sorted)
  }
}

/// What introspection reads off a `Forward` without knowing its type.
protocol ForwardingEntry {
  var targetKey: Key { get }
}

extension Forward: ForwardingEntry {
  var targetKey: Key { target }
}
