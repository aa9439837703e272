import CLibYAML

/// Bounds on the work of reading a config, checked on libyaml's event stream before Yams
/// builds anything: aliases are a way to make a 1 KB file stand for billions of nodes, and
/// Yams hashes every mapping key, so an alias used as a key costs time exponential in the depth
/// of the aliases. Every config Kernel documents is far inside these bounds.
enum YAMLBounds {
  /// The largest config file read: past it, a config error before any parsing.
  static let maximumBytes = 1 << 20
  /// The most nodes the file may stand for once every alias is expanded.
  static let maximumNodes = 100_000
  /// The deepest nesting of sections and lists.
  static let maximumDepth = 64

  /// Why `text` may not be read (the problem and its `line:column`; `isSyntax` for a key
  /// written twice in one section, which YAML does not allow), or nil when it may. Other syntax
  /// errors are left to Yams, which words them better.
  static func problem(in text: String) -> (
    problem: String, line: Int, column: Int, isSyntax: Bool
  )? {
    if text.utf8.count > maximumBytes {
      return (
        "the file is \(text.utf8.count) bytes; a config is at most \(maximumBytes) bytes", 1, 1,
        false
      )
    }
    var parser = yaml_parser_t()
    guard yaml_parser_initialize(&parser) == 1 else { return nil }
    defer { yaml_parser_delete(&parser) }
    let bytes = Array(text.utf8)
    return bytes.withUnsafeBufferPointer { buffer in
      yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
      return scan(&parser)
    }
  }

  /// One open section or list: the expanded size of what it holds so far, and for a section
  /// whether the next node is a key and where each of its keys was written.
  private struct Frame {
    var anchor: String?
    var size = 1
    var isMapping: Bool
    var expectsKey: Bool
    var keys: [String: (line: Int, column: Int)] = [:]
  }

  private static func scan(_ parser: inout yaml_parser_t) -> (
    problem: String, line: Int, column: Int, isSyntax: Bool
  )? {
    var anchors: [String: Int] = [:]
    var frames: [Frame] = []
    var total = 0
    while true {
      var event = yaml_event_t()
      guard yaml_parser_parse(&parser, &event) == 1 else { return nil }
      defer { yaml_event_delete(&event) }
      let line = Int(event.start_mark.line) + 1
      let column = Int(event.start_mark.column) + 1
      /// A finished node of `size`: counted into its parent; an alias may not be a key.
      func finish(_ size: Int, anchor: String?, isAlias: Bool) -> String? {
        if let anchor { anchors[anchor] = size }
        guard var parent = frames.popLast() else {
          total = size
          return nil
        }
        if parent.isMapping {
          if parent.expectsKey && isAlias {
            frames.append(parent)
            return "an alias is used as a key; write the key itself"
          }
          parent.expectsKey.toggle()
        }
        parent.size = min(parent.size + size, maximumNodes + 1)
        frames.append(parent)
        return parent.size > maximumNodes ? tooLarge : nil
      }
      let found: String?
      switch event.type {
      case YAML_STREAM_END_EVENT:
        return nil
      case YAML_SCALAR_EVENT:
        // A key written twice in one section is said where it is written again, not where
        // the section starts (Yams's `duplicatedKeysInMapping` has only that).
        if let parent = frames.last, parent.isMapping, parent.expectsKey,
          let key = text(event.data.scalar.value, length: event.data.scalar.length)
        {
          if let first = parent.keys[key] {
            return (
              "the key \(key) appears twice (first at \(first.line):\(first.column))", line, column,
              true
            )
          }
          frames[frames.count - 1].keys[key] = (line, column)
        }
        found = finish(1, anchor: name(event.data.scalar.anchor), isAlias: false)
      case YAML_ALIAS_EVENT:
        let size = name(event.data.alias.anchor).flatMap { anchors[$0] } ?? 1
        found = finish(size, anchor: nil, isAlias: true)
      case YAML_SEQUENCE_START_EVENT, YAML_MAPPING_START_EVENT:
        let isMapping = event.type == YAML_MAPPING_START_EVENT
        let anchor = name(
          isMapping ? event.data.mapping_start.anchor : event.data.sequence_start.anchor)
        frames.append(Frame(anchor: anchor, isMapping: isMapping, expectsKey: true))
        found =
          frames.count > maximumDepth
          ? "sections and lists are nested more than \(maximumDepth) deep" : nil
      case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
        guard let frame = frames.popLast() else { return nil }
        found = finish(frame.size, anchor: frame.anchor, isAlias: false)
      default:
        found = nil
      }
      if let found { return (found, line, column, false) }
      if total > maximumNodes { return (tooLarge, line, column, false) }
    }
  }

  private static var tooLarge: String {
    "its aliases expand to more than \(maximumNodes) values"
  }

  private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?, length: Int) -> String? {
    // Safe: libyaml's buffer of `length` bytes, alive for the event.
    pointer.map { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) }
  }

  private static func name(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
    // Safe: libyaml's NUL-terminated string, alive for the event.
    pointer.map { String(cString: UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self)) }
  }
}
