import Foundation

extension JSONValue {
  /// The JSON Merge Patch (RFC 7386) that makes `target` of `source`: for two objects, the
  /// fields `target` changes, adds (their new values, objects patched in turn) and removes
  /// (`null`); otherwise `target` whole. `source.applying(mergePatch:)` of it is `target`, but
  /// for a `null` inside an object, which a merge patch cannot set.
  ///
  /// What an optimistic edit changed of the copy it edited (`PendingWrite.edits`), so the edits
  /// of the writes still kept can be made again of the api's copy when one of them is undone.
  public static func mergePatch(from source: JSONValue, to target: JSONValue) -> JSONValue {
    guard case .object(let before) = source, case .object(let after) = target else {
      return target
    }
    var patch: [String: JSONValue] = [:]
    for (field, value) in after where before[field] != value {
      patch[field] = before[field].map { mergePatch(from: $0, to: value) } ?? value
    }
    for field in before.keys where after[field] == nil { patch[field] = .null }
    return .object(patch)
  }

  /// This value with the JSON Merge Patch `patch` (RFC 7386) applied: an object patch sets
  /// each of its fields (patching objects in turn) and removes those it sets to `null`; any
  /// other patch replaces the value whole.
  public func applying(mergePatch patch: JSONValue) -> JSONValue {
    guard case .object(let changes) = patch else { return patch }
    var fields: [String: JSONValue]
    if case .object(let current) = self { fields = current } else { fields = [:] }
    for (field, change) in changes {
      if change == .null {
        fields[field] = nil
      } else {
        fields[field] = (fields[field] ?? .null).applying(mergePatch: change)
      }
    }
    return .object(fields)
  }
}
